import autocannon from 'autocannon';

/** One autocannon run: requests per second and latency quantiles, plus any unexpected answers. */
export interface LoadResult {
  readonly rps: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  /** Answers whose status was not the expected one, and socket errors or timeouts. */
  readonly failed: number;
  readonly total: number;
  /**
   * `performance.now()` at the last answer. autocannon resolves an `amount` run on its one-second
   * tick, so a run of fewer requests than a second takes looks like a second; time to this instead.
   */
  readonly lastAnswerAt: number;
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
  /**
   * API tokens to spread the requests over: each request, whichever connection sends it, carries
   * the next one (round robin) as `authorization: Bearer …`, overriding any in `headers`.
   */
  readonly tokens?: readonly string[];
  /** Paths to spread the requests over the same way, instead of the path of `url`. */
  readonly paths?: readonly string[];
}

/**
 * autocannon's `requests` with one entry whose `setupRequest` rebuilds it before each send (a
 * few µs in this process). A shared counter rather than a list of fixed requests: every connection
 * walks such a list from its first entry, so the connections would move over it in step.
 */
function rotation(o: LoadOptions): { requests: autocannon.Request[] } | undefined {
  if (!o.tokens?.length && !o.paths?.length) return undefined;
  let next = 0;
  const setupRequest = (req: autocannon.Request): autocannon.Request => {
    const i = next++;
    const token = o.tokens?.length ? { authorization: `Bearer ${o.tokens[i % o.tokens.length]}` } : {};
    return { ...req, ...(o.paths?.length ? { path: o.paths[i % o.paths.length] } : {}), headers: { ...req.headers, ...token } };
  };
  return { requests: [{ setupRequest }] };
}

/** Drives `url` with autocannon in this process (the server under test shares the CPU with it). */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  let lastAnswerAt = performance.now();
  const run = autocannon({
    url: o.url,
    ...(o.amount ? { amount: o.amount } : { duration: o.seconds ?? 5 }),
    connections: o.connections,
    method: o.method ?? 'GET',
    ...(o.headers ? { headers: o.headers } : {}),
    ...(o.body ? { body: o.body } : {}),
    ...rotation(o),
  });
  // The promise autocannon returns is also its tracker, an EventEmitter (its types show only the promise).
  (run as unknown as NodeJS.EventEmitter).on('response', () => (lastAnswerAt = performance.now()));
  const result = await run;
  const byClass = result as unknown as Record<string, number>;
  const expected = byClass[`${Math.floor((o.expectStatus ?? 200) / 100)}xx`] ?? 0;
  return {
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    failed: result.requests.total - expected + result.errors + result.timeouts,
    total: result.requests.total,
    lastAnswerAt,
  };
}
