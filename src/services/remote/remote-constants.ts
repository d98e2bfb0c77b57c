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
