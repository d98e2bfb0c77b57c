import type { Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Log } from '../lib/log.js';
import { errorDetail } from '../worker/job-errors.js';
import type { SlotLoopStopped } from '../worker/slot-loop.js';

/** How long SIGTERM waits for in-flight requests before cutting their connections (`shutdown_grace_ms`'s default). */
export const SHUTDOWN_GRACE_MS = 30_000;

export type StopSignal = 'SIGTERM' | 'SIGINT';

/**
 * Resolves on the first SIGTERM or SIGINT. Installed before anything slow starts, so a signal
 * that arrives during start-up is not lost (without a listener Node would die at once). A second
 * signal finds no listener and ends the process immediately, as operators expect.
 */
export function firstSignal(): Promise<StopSignal> {
  return new Promise((resolve) => {
    const on = (signal: StopSignal) => () => {
      process.removeAllListeners('SIGTERM');
      process.removeAllListeners('SIGINT');
      resolve(signal);
    };
    process.once('SIGTERM', on('SIGTERM'));
    process.once('SIGINT', on('SIGINT'));
  });
}

/** Responses still being produced; drain() tells each to close its connection when done. */
export function trackInFlight(server: Server): Set<ServerResponse> {
  const inFlight = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  return inFlight;
}

/**
 * Stops accepting, lets in-flight requests finish, then resolves. Without `Connection: close` a
 * keep-alive client would hold the process open for the keep-alive timeout after its response.
 * Returns how many requests were cut when the grace period ran out (0: all finished).
 */
export async function drain(
  close: () => Promise<void>,
  server: Server,
  inFlight: Set<ServerResponse>,
  graceMs = SHUTDOWN_GRACE_MS,
): Promise<number> {
  for (const res of inFlight) {
    if (!res.headersSent) res.setHeader('Connection', 'close');
    else res.once('close', () => setImmediate(() => server.closeIdleConnections()));
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<number>((resolve) => {
    timer = setTimeout(() => {
      const cut = inFlight.size;
      server.closeAllConnections();
      resolve(cut);
    }, graceMs);
    timer.unref();
  });
  try {
    return await Promise.race([close().then(() => 0), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a `serve` process drains on SIGTERM: its listener (role api, all), its job runner (worker, all). */
export interface Drainable {
  readonly http?: { readonly server: Server; readonly inFlight: Set<ServerResponse>; close(): Promise<void> };
  readonly runner?: { readonly worker: { readonly running: number }; stop(): Promise<SlotLoopStopped> };
  /** /readyz answers 503 `draining` from the first moment. */
  readonly readiness: { startDraining(): void };
  /** How long requests are still taken, /readyz failing, before the listener closes (`drain_delay_ms`). */
  readonly drainDelayMs: number;
  /** How long in-flight requests (after the delay) and running jobs (from the signal) may finish (`shutdown_grace_ms`). */
  readonly graceMs: number;
  readonly log: Log;
}

/**
 * The drain of a `serve` process (docs/operations.md): not ready at once; the job runner stops
 * claiming at once and lets its runs finish for the grace, handing back the rest; requests are
 * still taken for the drain delay (a load balancer notices the failing /readyz meanwhile); then the
 * listener closes: waits answer the job as it is, event streams end with `event: reconnect`, other
 * requests finish within the grace or are cut. One line when it starts and one when it ends, with
 * counts. Resolves true when no request was cut and neither part failed (the exit code is then 0).
 */
export async function drainProcess(received: StopSignal, p: Drainable): Promise<boolean> {
  const started = Date.now();
  p.readiness.startDraining();
  let taken = 0;
  p.http?.server.on('request', () => taken++);
  const delayMs = p.http ? p.drainDelayMs : 0;
  p.log.info(
    { signal: received, drainDelayMs: delayMs, graceMs: p.graceMs, requestsInFlight: p.http?.inFlight.size ?? 0, jobsRunning: p.runner?.worker.running ?? 0 },
    'shutting down: draining (not ready; the job runner stops claiming)',
  );
  const http = p.http;
  // allSettled, not all: a runner whose stop fails (its database down) must not end the process
  // while the listener still drains; either failure is logged and makes the exit code 1, after both.
  const [httpDone, runnerDone] = await Promise.allSettled([
    http ? sleep(delayMs).then(() => drain(() => http.close(), http.server, http.inFlight, p.graceMs)) : Promise.resolve(0),
    p.runner?.stop(),
  ]);
  if (httpDone.status === 'rejected') p.log.error({ err: errorDetail(httpDone.reason) }, 'drain: closing the listener failed');
  if (runnerDone.status === 'rejected') p.log.error({ err: errorDetail(runnerDone.reason) }, 'drain: stopping the job runner failed');
  const cut = httpDone.status === 'fulfilled' ? httpDone.value : 0;
  const jobs = runnerDone.status === 'fulfilled' ? runnerDone.value : undefined;
  const counts = {
    durationMs: Date.now() - started,
    requestsTakenWhileDraining: taken,
    requestsCut: cut,
    jobsRunning: jobs?.inFlight ?? 0,
    jobsHandedBack: jobs?.cut ?? 0,
  };
  if (cut > 0) p.log.warn(counts, 'drained: grace period over, cut the connections of unfinished requests');
  else p.log.info(counts, 'drained');
  return cut === 0 && httpDone.status === 'fulfilled' && runnerDone.status === 'fulfilled';
}
