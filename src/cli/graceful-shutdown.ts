import type { Server, ServerResponse } from 'node:http';

/** How long SIGTERM waits for in-flight requests before cutting their connections. */
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
 * Returns false when the grace period ran out and connections were cut.
 */
export async function drain(
  close: () => Promise<void>,
  server: Server,
  inFlight: Set<ServerResponse>,
  graceMs = SHUTDOWN_GRACE_MS,
): Promise<boolean> {
  for (const res of inFlight) {
    if (!res.headersSent) res.setHeader('Connection', 'close');
    else res.once('close', () => setImmediate(() => server.closeIdleConnections()));
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      server.closeAllConnections();
      resolve(false);
    }, graceMs);
    timer.unref();
  });
  try {
    return await Promise.race([close().then(() => true as const), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
