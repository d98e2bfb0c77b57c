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
  { key: 'linger_timeout_ms', flag: 'linger-timeout-ms', env: 'MEDIAGEN_LINGER_TIMEOUT_MS', type: 'integer', min: 0, max: 60_000, help: 'after answering a request before its body arrived, how long the rest of the body is read and dropped before the connection closes' },
  { key: 'linger_max_bytes', flag: 'linger-max-bytes', env: 'MEDIAGEN_LINGER_MAX_BYTES', type: 'integer', min: 0, max: 16 * 1024 * 1024 * 1024, help: 'the most bytes of such a body read and dropped before the connection closes' },
  { key: 'max_connections', flag: 'max-connections', env: 'MEDIAGEN_MAX_CONNECTIONS', type: 'integer', min: 1, max: 1_000_000, help: 'open HTTP connections at most; connections beyond it are closed at once' },
  { key: 'max_concurrent_jobs', flag: 'max-concurrent-jobs', env: 'MEDIAGEN_MAX_CONCURRENT_JOBS', type: 'integer', ...WORKSPACE_LIMITS.maxConcurrentJobs, help: 'default per-workspace concurrency for new workspaces' },
  { key: 'max_backlogged_jobs', flag: 'max-backlogged-jobs', env: 'MEDIAGEN_MAX_BACKLOGGED_JOBS', type: 'integer', ...WORKSPACE_LIMITS.maxBackloggedJobs, help: 'default per-workspace backlog for new workspaces' },
  { key: 'role', flag: 'role', env: 'MEDIAGEN_ROLE', type: 'string', oneOf: ['all', 'api', 'worker'], help: 'all (API and worker), api (HTTP only) or worker (runs jobs only)' },
  { key: 'worker_concurrency', flag: 'worker-concurrency', env: 'MEDIAGEN_WORKER_CONCURRENCY', type: 'integer', min: 1, max: 1024, help: 'jobs this process runs at once (default: number of cores)' },
  { key: 'job_timeout_ms', flag: 'job-timeout-ms', env: 'MEDIAGEN_JOB_TIMEOUT_MS', type: 'integer', min: 1000, max: 86_400_000, help: 'a job still running this long after its first claim fails with timeout' },
  { key: 'lease_ms', flag: 'lease-ms', env: 'MEDIAGEN_LEASE_MS', type: 'integer', min: 300, max: 3_600_000, help: "how long a worker's claim lasts without a heartbeat" },
  { key: 'poll_interval_ms', flag: 'poll-interval-ms', env: 'MEDIAGEN_POLL_INTERVAL_MS', type: 'integer', min: 10, max: 600_000, help: 'backstop poll for jobs, expired leases and backlogs' },
  { key: 'shutdown_grace_ms', flag: 'shutdown-grace-ms', env: 'MEDIAGEN_SHUTDOWN_GRACE_MS', type: 'integer', min: 0, max: 3_600_000, help: 'on SIGTERM, how long running jobs (and, in serve, HTTP requests in flight) may finish before jobs are handed back and requests cut' },
  { key: 'janitor_interval_ms', flag: 'janitor-interval-ms', env: 'MEDIAGEN_JANITOR_INTERVAL_MS', type: 'integer', min: 1000, max: 86_400_000, help: "time between the output and retention janitors' sweeps (workers only; one runs at start)" },
  { key: 'input_max_bytes', flag: 'input-max-bytes', env: 'MEDIAGEN_INPUT_MAX_BYTES', type: 'integer', min: 1024, max: 1024 * 1024 * 1024, help: 'largest input file (image_url, init_video, ...) fetched or decoded' },
  { key: 'input_timeout_ms', flag: 'input-timeout-ms', env: 'MEDIAGEN_INPUT_TIMEOUT_MS', type: 'integer', min: 100, max: 600_000, help: 'time limit for fetching one input URL' },
  { key: 'input_max_video_seconds', flag: 'input-max-video-seconds', env: 'MEDIAGEN_INPUT_MAX_VIDEO_SECONDS', type: 'integer', min: 1, max: 86_400, help: 'longest video input (init_video), in seconds, as its container and streams claim' },
  { key: 'input_max_video_frames', flag: 'input-max-video-frames', env: 'MEDIAGEN_INPUT_MAX_VIDEO_FRAMES', type: 'integer', min: 1, max: 10_000_000, help: 'most frames in a video input stream' },
  { key: 'input_max_video_pixels', flag: 'input-max-video-pixels', env: 'MEDIAGEN_INPUT_MAX_VIDEO_PIXELS', type: 'integer', min: 1, max: 1_000_000_000, help: 'largest video input frame, width x height' },
  { key: 'input_max_streams', flag: 'input-max-streams', env: 'MEDIAGEN_INPUT_MAX_STREAMS', type: 'integer', min: 1, max: 1000, help: 'most streams (video, audio, subtitles, data) in a video input' },
  { key: 'input_max_image_pixels', flag: 'input-max-image-pixels', env: 'MEDIAGEN_INPUT_MAX_IMAGE_PIXELS', type: 'integer', min: 1, max: 1_000_000_000, help: 'largest image input, width x height' },
  { key: 'input_decode_timeout_ms', flag: 'input-decode-timeout-ms', env: 'MEDIAGEN_INPUT_DECODE_TIMEOUT_MS', type: 'integer', min: 100, max: 3_600_000, help: 'wall time of one ffmpeg run that reads an input' },
  { key: 'input_decode_cpu_seconds', flag: 'input-decode-cpu-seconds', env: 'MEDIAGEN_INPUT_DECODE_CPU_SECONDS', type: 'integer', min: 1, max: 86_400, help: 'CPU time of one ffmpeg run that reads an input' },
  { key: 'ffmpeg_path', flag: 'ffmpeg-path', env: 'MEDIAGEN_FFMPEG_PATH', type: 'string', help: 'the ffmpeg to run (default: ffmpeg on PATH, else the bundled FFmpeg 4.1, with a warning)' },
  { key: 'ffprobe_path', flag: 'ffprobe-path', env: 'MEDIAGEN_FFPROBE_PATH', type: 'string', help: 'the ffprobe to run (default: ffprobe on PATH, else the bundled one)' },
  { key: 'asset_max_bytes', flag: 'asset-max-bytes', env: 'MEDIAGEN_ASSET_MAX_BYTES', type: 'integer', min: 1024, max: 4 * 1024 * 1024 * 1024, help: 'largest file POST /assets accepts; a larger upload answers 413' },
  { key: 'worker_output_max_bytes', flag: 'worker-output-max-bytes', env: 'MEDIAGEN_WORKER_OUTPUT_MAX_BYTES', type: 'integer', min: 1024, max: 2 ** 40, help: 'largest output file a remote worker may upload (PUT /worker/v1/jobs/{id}/outputs/{name}); a larger one answers 413' },
  { key: 'asset_quota_bytes', flag: 'asset-quota-bytes', env: 'MEDIAGEN_ASSET_QUOTA_BYTES', type: 'integer', min: 0, max: 2 ** 50, help: "bytes of assets one workspace may keep; an upload past it answers 413 (0: no quota)" },
  { key: 'max_fault_retries', flag: 'max-fault-retries', env: 'MEDIAGEN_MAX_FAULT_RETRIES', type: 'integer', min: 0, max: 20, help: 'infrastructure faults (disk full, EMFILE, read-only, database lost) a job is handed back for before it fails with server_unavailable' },
  { key: 'min_free_disk_bytes', flag: 'min-free-disk-bytes', env: 'MEDIAGEN_MIN_FREE_DISK_BYTES', type: 'integer', min: 0, max: 2 ** 50, help: 'below this much free space in the data dir, job creation answers 503 and /readyz is not ready' },
  // Storage (docs/operations.md): where outputs, assets and previews live, and how their URLs answer.
  { key: 'output_store', flag: 'output-store', env: 'MEDIAGEN_OUTPUT_STORE', type: 'string', pattern: { re: /^(disk|s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[A-Za-z0-9!_.*'()/-]*)?)$/, says: 'disk or s3://bucket[/prefix]' }, help: 'disk (outputs under the data dir) or s3://bucket[/prefix] (an S3-compatible bucket)' },
  { key: 's3_endpoint', flag: 's3-endpoint', env: 'MEDIAGEN_S3_ENDPOINT', type: 'url', help: "the S3-compatible service's URL (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS itself)" },
  { key: 's3_region', flag: 's3-region', env: 'MEDIAGEN_S3_REGION', type: 'string', help: "the bucket's region (default: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1)" },
  { key: 's3_force_path_style', flag: 's3-force-path-style', env: 'MEDIAGEN_S3_FORCE_PATH_STYLE', type: 'boolean', help: 'address the bucket as endpoint/bucket rather than bucket.endpoint (most self-hosted S3 services)' },
  { key: 's3_access_key_id', flag: 's3-access-key-id', env: 'MEDIAGEN_S3_ACCESS_KEY_ID', type: 'string', help: "the bucket's access key id (default: the AWS SDK's chain: AWS_ACCESS_KEY_ID, profiles, instance roles)" },
  { key: 's3_secret_access_key', flag: 's3-secret-access-key', env: 'MEDIAGEN_S3_SECRET_ACCESS_KEY', type: 'string', help: 'the secret of s3_access_key_id (prefer the environment or the config file to a flag)' },
  { key: 'output_urls', flag: 'output-urls', env: 'MEDIAGEN_OUTPUT_URLS', type: 'string', oneOf: ['serve', 'presign'], help: 'serve (the API streams each file) or presign (the API redirects to a short-lived URL of the bucket; s3 only)' },
  { key: 'presign_ttl_seconds', flag: 'presign-ttl-seconds', env: 'MEDIAGEN_PRESIGN_TTL_SECONDS', type: 'integer', min: 60, max: 604_800, help: 'how long a presigned output URL works' },
  // Retention (docs/operations.md): 0 keeps forever.
  { key: 'output_retention_days', flag: 'output-retention-days', env: 'MEDIAGEN_OUTPUT_RETENTION_DAYS', type: 'integer', min: 0, max: 36_500, help: "days a finished job's output files are kept; then its URLs answer 410 (0: forever)" },
  { key: 'job_retention_days', flag: 'job-retention-days', env: 'MEDIAGEN_JOB_RETENTION_DAYS', type: 'integer', min: 0, max: 36_500, help: 'days a finished job is kept; then GET /jobs/{id} answers 404 (0: forever)' },
  { key: 'asset_retention_days', flag: 'asset-retention-days', env: 'MEDIAGEN_ASSET_RETENTION_DAYS', type: 'integer', min: 0, max: 36_500, help: 'days an asset is kept after its upload (0: forever)' },
  { key: 'webhook_log_retention_days', flag: 'webhook-log-retention-days', env: 'MEDIAGEN_WEBHOOK_LOG_RETENTION_DAYS', type: 'integer', min: 0, max: 36_500, help: 'days the record of a finished webhook delivery is kept (0: forever)' },
  { key: 'idempotency_key_hours', flag: 'idempotency-key-hours', env: 'MEDIAGEN_IDEMPOTENCY_KEY_HOURS', type: 'integer', min: 1, max: 8760, help: 'hours an Idempotency-Key is remembered after its first request' },
  // The write path (docs/benchmarks.md, issue 33): creates that arrive together share one transaction.
  { key: 'create_batch_max', flag: 'create-batch-max', env: 'MEDIAGEN_CREATE_BATCH_MAX', type: 'integer', min: 1, max: 1000, help: 'creates one write transaction admits at most (group commit; 1: each create its own transaction)' },
  { key: 'create_batch_window_ms', flag: 'create-batch-window-ms', env: 'MEDIAGEN_CREATE_BATCH_WINDOW_MS', type: 'integer', min: 0, max: 100, help: 'how long an idle server holds a create for others to share its transaction (0: only those arriving while the last one commits)' },
  // Metrics (docs/operations.md): off unless one of these is set.
  { key: 'metrics_port', flag: 'metrics-port', env: 'MEDIAGEN_METRICS_PORT', type: 'integer', min: 0, max: 65535, help: 'serve /metrics (Prometheus) on this port of --metrics-host, without a token (0 picks a free one)' },
  { key: 'metrics_host', flag: 'metrics-host', env: 'MEDIAGEN_METRICS_HOST', type: 'string', help: 'address the metrics_port listener binds (default loopback only; a private interface for a remote scraper)' },
  { key: 'metrics_token', flag: 'metrics-token', env: 'MEDIAGEN_METRICS_TOKEN', type: 'string', pattern: { re: /^.{16,}$/s, says: 'at least 16 characters (a long random secret)' }, help: 'serve /metrics on the API port to requests with Authorization: Bearer <this token> (16+ characters; prefer the env var or config file: ps shows flags)' },
  // Drain (docs/operations.md).
  { key: 'drain_delay_ms', flag: 'drain-delay-ms', env: 'MEDIAGEN_DRAIN_DELAY_MS', type: 'integer', min: 0, max: 600_000, help: 'on SIGTERM, how long /readyz answers 503 while requests are still taken, before the listener closes (for load balancers to notice)' },
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
  // Above the idle timeouts of the common load balancers (60 s), as Fastify's own default: a
  // balancer must never reuse a connection the server has just closed (docs/deploy.md).
  keep_alive_timeout_ms: 72_000,
  linger_timeout_ms: 5000,
  linger_max_bytes: 256 * 1024 * 1024,
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
  // The engine's DEFAULT_MEDIA_LIMITS are these (src/engines/media/media-limits.ts).
  input_max_video_seconds: 60,
  input_max_video_frames: 3600,
  input_max_video_pixels: 3840 * 2160,
  input_max_streams: 8,
  input_max_image_pixels: 50_000_000,
  input_decode_timeout_ms: 120_000,
  input_decode_cpu_seconds: 240,
  ffmpeg_path: undefined as string | undefined,
  ffprobe_path: undefined as string | undefined,
  // The original API's limit per asset: 75 MB.
  asset_max_bytes: 75 * 1024 * 1024,
  asset_quota_bytes: 10 * 1024 * 1024 * 1024,
  worker_output_max_bytes: 2 * 1024 * 1024 * 1024,
  max_fault_retries: 3,
  min_free_disk_bytes: 256 * 1024 * 1024,
  output_store: 'disk',
  s3_endpoint: undefined as string | undefined,
  s3_region: undefined as string | undefined,
  s3_force_path_style: false,
  s3_access_key_id: undefined as string | undefined,
  s3_secret_access_key: undefined as string | undefined,
  output_urls: 'serve',
  presign_ttl_seconds: 900,
  output_retention_days: 30,
  job_retention_days: 90,
  asset_retention_days: 0,
  webhook_log_retention_days: 30,
  idempotency_key_hours: 24,
  create_batch_max: 64,
  create_batch_window_ms: 0,
  metrics_port: undefined as number | undefined,
  metrics_host: '127.0.0.1',
  metrics_token: undefined as string | undefined,
  drain_delay_ms: 0,
  sandbox: false,
  log_level: 'info',
};
