import { JOB_ERROR_CODES } from '../../engines/engine.js';
import type { JobErrorCode } from '../../engines/engine.js';

/**
 * The worker protocol's values that both sides read at run time (docs/workers.md): the server's
 * routes and schemas, and the remote worker (src/worker/remote/). Apart from remote-views.ts so
 * that the worker can import them as values without loading TypeBox or any server code: keep this
 * module's imports to engines/engine.ts, which the worker loads anyway.
 */

/**
 * Where the worker protocol lives: every route's path starts with it, and a worker cuts the URLs
 * the server hands out (uploads, signed inputs) at it to put them on its own base URL.
 */
export const REMOTE_PATH_PREFIX = '/worker/v1';

/**
 * Why a worker must stop working on a job: the `reason` of a 409 on a job route. The server sends
 * one of these; a worker reads any other (or none) as `lease_lost`.
 */
export const STOP_REASONS = ['cancelled', 'completed', 'deleted', 'lease_lost', 'timeout'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** A job error code a remote worker may fail a job with: the server's own two are not its to give. */
export type WorkerFailCode = Exclude<JobErrorCode, 'worker_lost' | 'server_unavailable'>;
export const WORKER_FAIL_CODES: readonly WorkerFailCode[] = Object.keys(JOB_ERROR_CODES).filter(
  (c): c is WorkerFailCode => c !== 'worker_lost' && c !== 'server_unavailable',
);

/** The longest `message` a fail may carry: it is shown to the job's client. */
export const FAIL_MESSAGE_MAX = 500;
