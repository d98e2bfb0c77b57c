/**
 * Durations and sizes of one bench run. `--quick` shortens every phase so both backends finish in
 * under three minutes on two cores; the full run stays under fifteen.
 */
export interface Settings {
  readonly quick: boolean;
  /** Seconds of each autocannon run at the first store size (HTTP figures and baselines). */
  readonly httpSeconds: number;
  /** Requests of each kind, one at a time, timed at each store size. */
  readonly scaleRequests: number;
  /** Seconds each target is driven, unrecorded, before the first round (JIT, caches, pools). */
  readonly warmupSeconds: number;
  readonly connections: number;
  /** Stored jobs for the HTTP figures and the small end of store scale (the 10,000). */
  readonly smallStore: number;
  /** Stored jobs at the large end of store scale (the 1,000,000; 100,000 with --quick). */
  readonly largeStore: number;
  /** Samples of embedded dispatch latency. */
  readonly dispatchSamples: number;
  /** Split dispatch: at most this many samples, and at most this many seconds. */
  readonly splitSamples: number;
  readonly splitSeconds: number;
  readonly webhookSamples: number;
  /** Jobs created for the pipeline throughput, and how many creates are in flight at once. */
  readonly pipelineJobs: number;
  readonly pipelineConcurrency: number;
  /** Workspaces, one API token each, the spread create run of the HTTP round sends its requests over. */
  readonly spreadWorkspaces: number;
  /** Job slots of the in-process worker. */
  readonly workerConcurrency: number;
}

export function settingsFrom(argv: readonly string[], env: NodeJS.ProcessEnv): Settings {
  const quick = argv.includes('--quick');
  const seconds = env.BENCH_SECONDS ? Number(env.BENCH_SECONDS) : undefined;
  return {
    quick,
    httpSeconds: seconds ?? (quick ? 2 : 8),
    scaleRequests: quick ? 100 : 300,
    warmupSeconds: quick ? 1 : 2,
    connections: 10,
    smallStore: 10_000,
    largeStore: quick ? 100_000 : 1_000_000,
    dispatchSamples: quick ? 50 : 300,
    splitSamples: quick ? 20 : 200,
    splitSeconds: quick ? 6 : 60,
    webhookSamples: quick ? 30 : 200,
    pipelineJobs: quick ? 100 : 600,
    pipelineConcurrency: 16,
    spreadWorkspaces: 16,
    workerConcurrency: 8,
  };
}

/** The generation request every create sends (its size is the bare POST's body size too). */
export const CREATE_PATH = '/generate/image/vendor-a/model-a-2/medium-turbo';
export const CREATE_BODY = JSON.stringify({ prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' });
