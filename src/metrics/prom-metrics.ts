import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { NON_TERMINAL_STATUSES } from '../domain/states.js';
import type { JobStatus } from '../domain/states.js';
import type { MicroUsd } from '../domain/money.js';
import type { RequestMeter } from '../http/plugins/request-metrics.js';
import type { MetricsScrape } from '../http/routes/metrics-routes.js';
import type { Clock } from '../lib/clock.js';
import type { ProviderCallOutcome } from '../engines/providers/provider-http.js';
import { modelLabel } from '../services/common/meter.js';
import type { Meter, WebhookAttemptOutcome } from '../services/common/meter.js';
import type { ProviderMeter } from '../engines/providers/provider-engine.js';
import type { JobRecord } from '../store/store.js';
import { CachedReading } from './cached-reading.js';
import type { ModelQueue } from './queue-figures.js';

/** What the scrape-time gauges read: the whole cluster's figures, from the shared database. */
export interface ClusterReadings {
  readonly queueDepth: () => Promise<Map<JobStatus, number>>;
  readonly remoteWorkers: () => Promise<number>;
  /** Per model and engine: jobs waiting, the oldest one's wait, jobs running (the signals to scale on). */
  readonly queueByModel: () => Promise<readonly ModelQueue[]>;
}

/** The database is read at most this often, however many scrapers ask (cluster-wide figures). */
export const READING_CACHE_MS = 5_000;

/** Seconds: from a millisecond API call to an hour-long render. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const DISPATCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const RUN_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

const seconds = (fromMicros: number, toMicros: number): number => Math.max(0, toMicros - fromMicros) / 1e6;

/**
 * The process's metrics on prom-client, in a registry of its own (not prom-client's global one),
 * so every runtime in a process (tests, the bench) counts apart. Counters and histograms count
 * what this process did; the gauges read the database at scrape time and show the whole cluster
 * (docs/operations.md: alert on their max() over processes, never their sum).
 */
export class PromMetrics implements Meter, RequestMeter, ProviderMeter {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'mediagen_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly #requestSeconds = new Histogram({
    name: 'mediagen_http_request_duration_seconds',
    help: 'Time from a request to its answer, by route template and method (Prefer: wait and event streams included)',
    labelNames: ['route', 'method'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  readonly #created = new Counter({
    name: 'mediagen_jobs_created_total',
    help: 'Jobs admitted (queued or backlogged), by model',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly #ended = new Counter({
    name: 'mediagen_jobs_ended_total',
    help: 'Jobs that ended, by model and terminal status (completed, failed, cancelled), counted by the process that ended them',
    labelNames: ['model', 'status'] as const,
    registers: [this.registry],
  });
  readonly #dispatch = new Histogram({
    name: 'mediagen_job_dispatch_seconds',
    help: 'Time from a job\'s creation to its first claim by a worker (in-process or remote), by model',
    labelNames: ['model'] as const,
    buckets: DISPATCH_BUCKETS,
    registers: [this.registry],
  });
  readonly #run = new Histogram({
    name: 'mediagen_job_run_seconds',
    help: 'Time from a job\'s first claim to its completion or failure, by model and status',
    labelNames: ['model', 'status'] as const,
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });
  readonly #webhooks = new Counter({
    name: 'mediagen_webhook_attempts_total',
    help: 'Webhook POST attempts, by outcome: delivered, retry (another attempt follows), exhausted, gone (410), refused (a URL not allowed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly #providerCalls = new Counter({
    name: 'mediagen_provider_requests_total',
    help: 'HTTP calls to hosted providers, by provider name, type, method and outcome (ok, rejected, unavailable, malformed)',
    labelNames: ['provider', 'type', 'method', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly #providerSeconds = new Histogram({
    name: 'mediagen_provider_request_duration_seconds',
    help: 'Time a call to a hosted provider took, by provider name and method (a synchronous generation included)',
    labelNames: ['provider', 'method'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  readonly #charges = new Counter({
    name: 'mediagen_charges_micro_usd_total',
    help: 'Money charged for completed jobs, in micro-USD, by model',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  constructor(readings: ClusterReadings, clock: Clock) {
    const depth = new CachedReading(readings.queueDepth, READING_CACHE_MS, clock);
    const workers = new CachedReading(readings.remoteWorkers, READING_CACHE_MS, clock);
    const queues = new CachedReading(readings.queueByModel, READING_CACHE_MS, clock);
    // The three scaling series share one reading; each leaves its series out when it failed.
    const queueGauge = (name: string, help: string, value: (q: ModelQueue) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['model', 'engine'] as const,
        registers: [this.registry],
        async collect() {
          this.reset();
          const all = await queues.read();
          for (const q of all ?? []) this.set({ model: q.model, engine: q.engine }, value(q));
        },
      });
    queueGauge('mediagen_queue_waiting', 'Jobs queued and waiting for a worker, by model and the engine they wait for, over the whole cluster (cached 5 s)', (q) => q.waiting);
    queueGauge('mediagen_queue_oldest_wait_seconds', 'Seconds since the oldest queued job of the model was created (0: none waits), by model and engine (cached 5 s)', (q) => q.oldestWaitSeconds);
    queueGauge('mediagen_queue_running', 'Jobs claimed and running, by model and engine, over the whole cluster (cached 5 s)', (q) => q.running);
    new Gauge({
      name: 'mediagen_queue_depth',
      help: 'Jobs in each status that has not ended, over the whole cluster (read from the database, cached 5 s)',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        // A failed read leaves the series out (alert on absence); the scrape still answers.
        const counts = await depth.read();
        if (counts) for (const status of NON_TERMINAL_STATUSES) this.set({ status }, counts.get(status) ?? 0);
      },
    });
    new Gauge({
      name: 'mediagen_remote_workers_connected',
      help: 'Remote workers seen in the last 60 s with a token not revoked, over the whole cluster (cached 5 s)',
      registers: [this.registry],
      async collect() {
        this.reset();
        const live = await workers.read();
        if (live !== undefined) this.set(live);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /**
   * `mediagen_engine_up{engine}`: each engine's circuit in this process (docs/routing.md,
   * "Circuits"): 1 closed, 0.5 half-open (a probe may go), 0 open. Set once the engines are built.
   */
  watchEngines(states: () => ReadonlyMap<string, 'closed' | 'open' | 'half_open'>): void {
    this.registry.removeSingleMetric('mediagen_engine_up');
    new Gauge({
      name: 'mediagen_engine_up',
      help: "Each engine's circuit in this process: 1 closed, 0.5 half-open, 0 open (the engine kept failing; its jobs go to the next engine of their chain, or wait)",
      labelNames: ['engine'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [engine, state] of states()) this.set({ engine }, state === 'closed' ? 1 : state === 'half_open' ? 0.5 : 0);
      },
    });
  }

  jobCreated(type: string): void {
    this.#created.inc({ model: modelLabel(type) });
  }

  jobClaimed(job: JobRecord): void {
    // Called for a job's first claim only (JobRuns.claim): later claims say nothing about how long clients wait.
    if (job.startedAt === null) return;
    this.#dispatch.observe({ model: modelLabel(job.type) }, seconds(job.createdAt, job.startedAt));
  }

  jobEnded(job: JobRecord, chargedMicros: MicroUsd | null): void {
    const model = modelLabel(job.type);
    this.#ended.inc({ model, status: job.status });
    if (chargedMicros !== null && chargedMicros > 0) this.#charges.inc({ model }, chargedMicros);
    // A run's time, from its first claim; a cancel cuts a run short and is left out.
    if (job.startedAt !== null && job.completedAt !== null && job.status !== 'cancelled') {
      this.#run.observe({ model, status: job.status }, seconds(job.startedAt, job.completedAt));
    }
  }

  providerCall(provider: string, type: string, call: ProviderCallOutcome): void {
    this.#providerCalls.inc({ provider, type, method: call.method, outcome: call.outcome });
    this.#providerSeconds.observe({ provider, method: call.method }, Math.max(0, call.ms) / 1000);
  }

  webhookAttempt(outcome: WebhookAttemptOutcome): void {
    this.#webhooks.inc({ outcome });
  }

  requestServed(route: string, method: string, status: number, elapsedSeconds: number): void {
    this.#requests.inc({ route, method, status: String(status) });
    this.#requestSeconds.observe({ route, method }, elapsedSeconds);
  }

  async scrape(): Promise<MetricsScrape> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
