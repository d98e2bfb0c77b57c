import autocannon from 'autocannon';

/** One autocannon run: requests per second and latency quantiles, plus any unexpected answers. */
export interface LoadResult {
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** Answers whose status was not the expected one, and socket errors or timeouts. */
  readonly failed: number;
  readonly total: number;
}

export interface LoadOptions {
  readonly url: string;
  /** Run for this long, or until `amount` requests are answered. */
  readonly seconds?: number;
  readonly amount?: number;
  readonly connections: number;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly expectStatus?: number;
}

/** Drives `url` with autocannon in this process (the server under test shares the CPU with it). */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: o.url,
    ...(o.amount ? { amount: o.amount } : { duration: o.seconds ?? 5 }),
    connections: o.connections,
    method: o.method ?? 'GET',
    ...(o.headers ? { headers: o.headers } : {}),
    ...(o.body ? { body: o.body } : {}),
  });
  const byClass = result as unknown as Record<string, number>;
  const expected = byClass[`${Math.floor((o.expectStatus ?? 200) / 100)}xx`] ?? 0;
  return {
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    failed: result.requests.total - expected + result.errors + result.timeouts,
    total: result.requests.total,
  };
}
