/** Small statistics for latency samples (milliseconds). */

/** The nearest-rank percentile `p` (0..100) of `samples`; null when there are none. */
export function percentile(samples: readonly number[], p: number): number | null {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface Quantiles {
  readonly p50: number | null;
  readonly p99: number | null;
}

/** p50 and p99, rounded to 0.01 ms. */
export function quantiles(samples: readonly number[]): Quantiles {
  return { p50: round(percentile(samples, 50)), p99: round(percentile(samples, 99)) };
}

export function round(x: number | null, digits = 2): number | null {
  if (x === null || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** `a / b` rounded, or null when either is missing or b is zero. */
export function ratio(a: number | null | undefined, b: number | null | undefined, digits = 3): number | null {
  if (a == null || b == null || b === 0) return null;
  return round(a / b, digits);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` every `everyMs` until it returns a value; throws after `timeoutMs`. */
export async function waitUntil<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000, everyMs = 5): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
