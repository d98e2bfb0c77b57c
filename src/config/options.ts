/**
 * Every setting, once: its command-line flag, environment variable and config-file key. The
 * loader, `--help` and the test that keeps docs/config.md complete all read this table.
 */
export type OptionType = 'integer' | 'string' | 'boolean' | 'url';

export interface OptionSpec {
  readonly key: string;
  readonly flag: string;
  readonly env: string;
  readonly type: OptionType;
  readonly min?: number;
  readonly max?: number;
  /** For strings: the allowed values, or a pattern with the words that describe it. */
  readonly oneOf?: readonly string[];
  readonly pattern?: { readonly re: RegExp; readonly says: string };
  readonly help: string;
}

/** One entry of the config file's `deprecations` (docs/config.md). */
export interface DeprecationOverride {
  readonly model: string;
  readonly sunset_date: string;
  readonly replacement?: string;
  readonly migration_url?: string;
}

/**
 * The config file's `model_engines`: model path -> engine id, binding a model to another engine
 * than its module names (src/engines/router.ts checks both names at start).
 */
export type ModelEngines = Readonly<Record<string, string>>;

/** Bounds of the per-workspace job limits, wherever they are set (config defaults or admin CLI). */
export const WORKSPACE_LIMITS = {
  maxConcurrentJobs: { min: 1, max: 100_000 },
  maxBackloggedJobs: { min: 0, max: 1_000_000 },
} as const;

export const OPTIONS = [
  { key: 'port', flag: 'port', env: 'MEDIAGEN_PORT', type: 'integer', min: 0, max: 65535, help: 'TCP port to listen on (0 picks a free one)' },
  { key: 'host', flag: 'host', env: 'MEDIAGEN_HOST', type: 'string', help: 'address to listen on' },
  { key: 'data_dir', flag: 'data-dir', env: 'MEDIAGEN_DATA_DIR', type: 'string', help: 'directory for the SQLite store and outputs' },
  { key: 'database_url', flag: 'database-url', env: 'MEDIAGEN_DATABASE_URL', type: 'string', pattern: { re: /^postgres(ql)?:\/\/\S+$/, says: 'a postgres:// or postgresql:// URL' }, help: 'PostgreSQL URL; when set, used instead of the SQLite file in the data dir' },
  { key: 'public_url', flag: 'public-url', env: 'MEDIAGEN_PUBLIC_URL', type: 'url', help: 'base URL clients reach this server at' },
  { key: 'allow_private_urls', flag: 'allow-private-urls', env: 'MEDIAGEN_ALLOW_PRIVATE_URLS', type: 'boolean', help: 'allow input and webhook URLs that resolve to private addresses' },
  { key: 'engine_latency_ms', flag: 'engine-latency-ms', env: 'MEDIAGEN_ENGINE_LATENCY_MS', type: 'integer', min: 0, max: 600_000, help: 'simulated provider time per job, in milliseconds' },
  { key: 'body_limit_bytes', flag: 'body-limit-bytes', env: 'MEDIAGEN_BODY_LIMIT_BYTES', type: 'integer', min: 1024, max: 64 * 1024 * 1024, help: 'largest accepted JSON request body (generation requests)' },
  { key: 'request_timeout_ms', flag: 'request-timeout-ms', env: 'MEDIAGEN_REQUEST_TIMEOUT_MS', type: 'integer', min: 100, max: 3_600_000, help: 'time a client has to send a whole request, headers and body; then 408 and the connection is closed' },
  { key: 'headers_timeout_ms', flag: 'headers-timeout-ms', env: 'MEDIAGEN_HEADERS_TIMEOUT_MS', type: 'integer', min: 100, max: 3_600_000, help: 'time a client has to send the request headers (at most request_timeout_ms)' },
  { key: 'keep_alive_timeout_ms', flag: 'keep-alive-timeout-ms', env: 'MEDIAGEN_KEEP_ALIVE_TIMEOUT_MS', type: 'integer', min: 100, max: 3_600_000, help: 'an idle kept-alive connection is closed after this long' },
  { key: 'max_connections', flag: 'max-connections', env: 'MEDIAGEN_MAX_CONNECTIONS', type: 'integer', min: 1, max: 1_000_000, help: 'open HTTP connections at most; connections beyond it are closed at once' },
  { key: 'max_concurrent_jobs', flag: 'max-concurrent-jobs', env: 'MEDIAGEN_MAX_CONCURRENT_JOBS', type: 'integer', ...WORKSPACE_LIMITS.maxConcurrentJobs, help: 'default per-workspace concurrency for new workspaces' },
  { key: 'max_backlogged_jobs', flag: 'max-backlogged-jobs', env: 'MEDIAGEN_MAX_BACKLOGGED_JOBS', type: 'integer', ...WORKSPACE_LIMITS.maxBackloggedJobs, help: 'default per-workspace backlog for new workspaces' },
  { key: 'role', flag: 'role', env: 'MEDIAGEN_ROLE', type: 'string', oneOf: ['all', 'api', 'worker'], help: 'all (API and worker), api (HTTP only) or worker (runs jobs only)' },
  { key: 'worker_concurrency', flag: 'worker-concurrency', env: 'MEDIAGEN_WORKER_CONCURRENCY', type: 'integer', min: 1, max: 1024, help: 'jobs this process runs at once (default: number of cores)' },
  { key: 'job_timeout_ms', flag: 'job-timeout-ms', env: 'MEDIAGEN_JOB_TIMEOUT_MS', type: 'integer', min: 1000, max: 86_400_000, help: 'a job still running this long after its first claim fails with timeout' },
  { key: 'lease_ms', flag: 'lease-ms', env: 'MEDIAGEN_LEASE_MS', type: 'integer', min: 300, max: 3_600_000, help: "how long a worker's claim lasts without a heartbeat" },
  { key: 'poll_interval_ms', flag: 'poll-interval-ms', env: 'MEDIAGEN_POLL_INTERVAL_MS', type: 'integer', min: 10, max: 600_000, help: 'backstop poll for jobs, expired leases and backlogs' },
  { key: 'shutdown_grace_ms', flag: 'shutdown-grace-ms', env: 'MEDIAGEN_SHUTDOWN_GRACE_MS', type: 'integer', min: 0, max: 3_600_000, help: 'on SIGTERM, how long running jobs may finish before they are handed back' },
  { key: 'janitor_interval_ms', flag: 'janitor-interval-ms', env: 'MEDIAGEN_JANITOR_INTERVAL_MS', type: 'integer', min: 1000, max: 86_400_000, help: "time between the output janitor's sweeps (workers only; one runs at start)" },
  { key: 'input_max_bytes', flag: 'input-max-bytes', env: 'MEDIAGEN_INPUT_MAX_BYTES', type: 'integer', min: 1024, max: 1024 * 1024 * 1024, help: 'largest input file (image_url, init_video, ...) fetched or decoded' },
  { key: 'input_timeout_ms', flag: 'input-timeout-ms', env: 'MEDIAGEN_INPUT_TIMEOUT_MS', type: 'integer', min: 100, max: 600_000, help: 'time limit for fetching one input URL' },
  { key: 'input_max_video_seconds', flag: 'input-max-video-seconds', env: 'MEDIAGEN_INPUT_MAX_VIDEO_SECONDS', type: 'integer', min: 1, max: 86_400, help: 'longest video input (init_video), in seconds, as its container and streams claim' },
  { key: 'input_max_video_frames', flag: 'input-max-video-frames', env: 'MEDIAGEN_INPUT_MAX_VIDEO_FRAMES', type: 'integer', min: 1, max: 10_000_000, help: 'most frames in a video input stream' },
  { key: 'input_max_video_pixels', flag: 'input-max-video-pixels', env: 'MEDIAGEN_INPUT_MAX_VIDEO_PIXELS', type: 'integer', min: 1, max: 1_000_000_000, help: 'largest video input frame, width x height' },
  { key: 'input_max_streams', flag: 'input-max-streams', env: 'MEDIAGEN_INPUT_MAX_STREAMS', type: 'integer', min: 1, max: 1000, help: 'most streams (video, audio, subtitles, data) in a video input' },
  { key: 'input_max_image_pixels', flag: 'input-max-image-pixels', env: 'MEDIAGEN_INPUT_MAX_IMAGE_PIXELS', type: 'integer', min: 1, max: 1_000_000_000, help: 'largest image input, width x height' },
  { key: 'input_decode_timeout_ms', flag: 'input-decode-timeout-ms', env: 'MEDIAGEN_INPUT_DECODE_TIMEOUT_MS', type: 'integer', min: 100, max: 3_600_000, help: 'wall time of one ffmpeg run that reads an input' },
  { key: 'input_decode_cpu_seconds', flag: 'input-decode-cpu-seconds', env: 'MEDIAGEN_INPUT_DECODE_CPU_SECONDS', type: 'integer', min: 1, max: 86_400, help: 'CPU time of one ffmpeg run that reads an input' },
  { key: 'asset_max_bytes', flag: 'asset-max-bytes', env: 'MEDIAGEN_ASSET_MAX_BYTES', type: 'integer', min: 1024, max: 4 * 1024 * 1024 * 1024, help: 'largest file POST /assets accepts; a larger upload answers 413' },
  { key: 'worker_output_max_bytes', flag: 'worker-output-max-bytes', env: 'MEDIAGEN_WORKER_OUTPUT_MAX_BYTES', type: 'integer', min: 1024, max: 2 ** 40, help: 'largest output file a remote worker may upload (PUT /worker/v1/jobs/{id}/outputs/{name}); a larger one answers 413' },
  { key: 'asset_quota_bytes', flag: 'asset-quota-bytes', env: 'MEDIAGEN_ASSET_QUOTA_BYTES', type: 'integer', min: 0, max: 2 ** 50, help: "bytes of assets one workspace may keep; an upload past it answers 413 (0: no quota)" },
  { key: 'max_fault_retries', flag: 'max-fault-retries', env: 'MEDIAGEN_MAX_FAULT_RETRIES', type: 'integer', min: 0, max: 20, help: 'infrastructure faults (disk full, EMFILE, read-only, database lost) a job is handed back for before it fails with server_unavailable' },
  { key: 'min_free_disk_bytes', flag: 'min-free-disk-bytes', env: 'MEDIAGEN_MIN_FREE_DISK_BYTES', type: 'integer', min: 0, max: 2 ** 50, help: 'below this much free space in the data dir, job creation answers 503 and /readyz is not ready' },
  { key: 'sandbox', flag: 'sandbox', env: 'MEDIAGEN_SANDBOX', type: 'boolean', help: 'sandbox for integrators: prompt markers make jobs fail, time out or take longer on purpose, and each status lasts at least 1.1 s; refused with production settings (docs/sandbox.md)' },
  { key: 'log_level', flag: 'log-level', env: 'MEDIAGEN_LOG_LEVEL', type: 'string', oneOf: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], help: 'fatal, error, warn, info, debug, trace or silent' },
] as const satisfies readonly OptionSpec[];

export const DEFAULTS = {
  port: 8080,
  host: '127.0.0.1',
  data_dir: './data',
  database_url: undefined as string | undefined,
  public_url: undefined as string | undefined,
  allow_private_urls: false,
  engine_latency_ms: 2000,
  body_limit_bytes: 128 * 1024,
  request_timeout_ms: 30_000,
  headers_timeout_ms: 10_000,
  keep_alive_timeout_ms: 5000,
  max_connections: 1024,
  max_concurrent_jobs: 4,
  max_backlogged_jobs: 100,
  role: 'all',
  worker_concurrency: undefined as number | undefined,
  job_timeout_ms: 180_000,
  lease_ms: 30_000,
  poll_interval_ms: 1000,
  shutdown_grace_ms: 30_000,
  janitor_interval_ms: 600_000,
  input_max_bytes: 50 * 1024 * 1024,
  input_timeout_ms: 30_000,
  // The engine's DEFAULT_MEDIA_LIMITS are these (src/engines/media-limits.ts).
  input_max_video_seconds: 60,
  input_max_video_frames: 3600,
  input_max_video_pixels: 3840 * 2160,
  input_max_streams: 8,
  input_max_image_pixels: 50_000_000,
  input_decode_timeout_ms: 120_000,
  input_decode_cpu_seconds: 240,
  // The original API's limit per asset: 75 MB.
  asset_max_bytes: 75 * 1024 * 1024,
  asset_quota_bytes: 10 * 1024 * 1024 * 1024,
  worker_output_max_bytes: 2 * 1024 * 1024 * 1024,
  max_fault_retries: 3,
  min_free_disk_bytes: 256 * 1024 * 1024,
  sandbox: false,
  log_level: 'info',
};
