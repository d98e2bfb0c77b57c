import { isTerminal } from '../../src/domain/states.js';
import { jobRow } from './database.js';
import type { BenchDatabase } from './database.js';
import { CREATE_BODY, CREATE_PATH } from './settings.js';
import { waitUntil } from './stats.js';
import type { BenchServer } from './wiring.js';

/** Creates one job over HTTP and returns its id; anything but a 2xx is an error. */
export async function createJob(server: BenchServer, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${server.url}${CREATE_PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', ...headers },
    body: CREATE_BODY,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`create answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { job_id: string }).job_id;
}

/** Waits until the job has ended and returns its row. */
export async function finished(db: BenchDatabase, id: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  return waitUntil(
    async () => {
      const row = await jobRow(db, id);
      return row && isTerminal(String(row.status)) ? row : undefined;
    },
    `job ${id} to end`,
    timeoutMs,
    3,
  );
}

/** Waits until a worker has claimed the job and returns its row. */
export async function claimed(db: BenchDatabase, id: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  return waitUntil(
    async () => {
      const row = await jobRow(db, id);
      return row && row.started_at != null ? row : undefined;
    },
    `job ${id} to be claimed`,
    timeoutMs,
    3,
  );
}

/** Resolves with the first value `subscribe` hands over, or rejects after `timeoutMs`. */
export function next<T>(subscribe: (resolve: (v: T) => void) => void, what: string, timeoutMs = 30_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
    subscribe((v) => {
      clearTimeout(timer);
      resolve(v);
    });
  });
}
