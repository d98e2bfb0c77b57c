import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { UpstreamError } from '../../src/engines/upstream/upstream-error.js';
import { fetchFailure, neverSent, readCappedBody, retryHints } from '../../src/engines/upstream/upstream-http.js';
import { UpstreamRetry } from '../../src/engines/upstream/upstream-retry.js';
import { freePort } from '../helpers/free-port.js';

/** The upstream kit's retry policy and HTTP facts (src/engines/upstream/), against real sockets where it matters. */

/** Waits pass at once, moving the time by what was asked. */
class SkippingClock implements Clock {
  #ms = 1_000_000;
  readonly waits: number[] = [];
  nowMs(): number {
    return this.#ms;
  }
  async sleep(ms: number): Promise<void> {
    this.waits.push(ms);
    this.#ms += ms;
    await Promise.resolve();
  }
}

const policy = (clock: SkippingClock, extra: Partial<ConstructorParameters<typeof UpstreamRetry>[0]> = {}) =>
  new UpstreamRetry({ signal: new AbortController().signal, deadlineMs: clock.nowMs() + 600_000, clock, baseMs: 1000, submitAttempts: 3, label: { provider: 'p' }, ...extra });

/** A call failing with each of `errors` in turn, then answering 'ok'; counts its calls. */
function scripted(errors: UpstreamError[]) {
  const call = async () => {
    call.calls++;
    const err = errors.shift();
    if (err) throw err;
    return 'ok';
  };
  call.calls = 0;
  return call;
}

const unavailable = (status?: number, more: Partial<ConstructorParameters<typeof UpstreamError>[2]> = {}) => new UpstreamError('unavailable', 'down', { ...(status ? { status } : {}), ...more });

describe('what fetch says about a request that failed', () => {
  it('tells a connection refused (never sent) from one closed after the request went out (maybe taken)', async () => {
    const closed = await fetch(`http://127.0.0.1:${await freePort()}/`, { method: 'POST', body: 'x' }).catch((e: unknown) => e);
    expect(neverSent(closed)).toBe(true);
    expect(fetchFailure(closed, { timeoutMs: 1000, who: 'the provider' })).toMatchObject({ kind: 'unavailable', notSent: true });

    const server = createServer((req) => req.on('data', () => undefined).on('end', () => req.socket.destroy()));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const reset = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', body: 'x' }).catch((e: unknown) => e);
      expect(neverSent(reset)).toBe(false);
      expect(fetchFailure(reset, { timeoutMs: 1000, who: 'the provider' })).toMatchObject({ kind: 'unavailable', notSent: false });
    } finally {
      server.close();
    }
    const timedOut = Object.assign(new Error('timed out'), { name: 'TimeoutError' });
    expect(fetchFailure(timedOut, { timeoutMs: 1000, who: 'the provider' })).toMatchObject({ kind: 'unavailable', notSent: false, message: 'the provider did not answer within 1000 ms' });
  });

  it("reads retry-after-ms before Retry-After, and x-should-retry, as OpenAI's SDK does", () => {
    const now = Date.UTC(2026, 0, 1);
    expect(retryHints(new Headers({ 'retry-after-ms': '1500.5', 'retry-after': '9' }), now)).toEqual({ retryAfterMs: 1501 });
    expect(retryHints(new Headers({ 'retry-after': '2' }), now)).toEqual({ retryAfterMs: 2000 });
    expect(retryHints(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toEqual({ retryAfterMs: 3000 });
    expect(retryHints(new Headers({ 'x-should-retry': 'false' }), now)).toEqual({ shouldRetry: false });
    expect(retryHints(new Headers({ 'x-should-retry': 'true', 'retry-after-ms': 'soon' }), now)).toEqual({ shouldRetry: true });
  });

  it('reads a body up to its cap, refusing a larger one as malformed', async () => {
    expect((await readCappedBody(new Response('12345'), { maxBytes: 5, what: 'the answer' })).toString()).toBe('12345');
    await expect(readCappedBody(new Response('123456'), { maxBytes: 5, what: 'the answer' })).rejects.toMatchObject({ kind: 'malformed', message: 'the answer is larger than 5 bytes' });
    await expect(readCappedBody(new Response('123456', { headers: { 'content-length': '6' } }), { maxBytes: 5, what: 'the answer' })).rejects.toMatchObject({ kind: 'malformed' });
  });
});

describe('the retry policy', () => {
  it('sends a submission again only after a 429 or a connection that never opened, at most submitAttempts times', async () => {
    const clock = new SkippingClock();
    const taken = scripted([unavailable(429), unavailable(undefined, { notSent: true })]);
    expect(await policy(clock).submit(taken)).toBe('ok');
    expect(taken.calls).toBe(3);
    for (const maybeTaken of [unavailable(500), unavailable(503), unavailable(undefined)]) {
      const call = scripted([maybeTaken]);
      await expect(policy(clock).submit(call)).rejects.toBe(maybeTaken);
      expect(call.calls).toBe(1);
    }
    const throttled = scripted([unavailable(429), unavailable(429), unavailable(429), unavailable(429)]);
    await expect(policy(clock).submit(throttled)).rejects.toMatchObject({ status: 429 });
    expect(throttled.calls).toBe(3);
  });

  it('sends a submission again after a 5xx or a timeout when the upstream deduplicates it', async () => {
    const call = scripted([unavailable(500), unavailable(undefined)]);
    expect(await policy(new SkippingClock(), { deduplicates: true }).submit(call)).toBe('ok');
    expect(call.calls).toBe(3);
  });

  it('follows through any number of failures until the next wait would reach the deadline, backing off to 30 s', async () => {
    const clock = new SkippingClock();
    const started = clock.nowMs();
    const forever = async () => {
      throw unavailable(503);
    };
    await expect(policy(clock, { deadlineMs: started + 300_000 }).follow(forever)).rejects.toMatchObject({ status: 503 });
    expect(clock.waits.slice(0, 6)).toEqual([1000, 2000, 4000, 8000, 16000, 30000]);
    expect(clock.waits.length).toBeGreaterThan(10);
    expect(clock.nowMs() - started).toBeGreaterThan(300_000 - 30_000);
  });

  it("waits at least the upstream's Retry-After, obeys x-should-retry, and never retries a refusal or a malformed answer unasked", async () => {
    const clock = new SkippingClock();
    expect(await policy(clock).follow(scripted([unavailable(503, { retryAfterMs: 45_000 })]))).toBe('ok');
    expect(clock.waits).toEqual([45_000]);
    const told = unavailable(503, { shouldRetry: false });
    await expect(policy(clock).follow(scripted([told]))).rejects.toBe(told);
    expect(await policy(clock).follow(scripted([new UpstreamError('rejected', 'locked', { status: 409, shouldRetry: true })]))).toBe('ok');
    for (const err of [new UpstreamError('rejected', 'no', { status: 400 }), new UpstreamError('malformed', 'not json')]) {
      await expect(policy(clock).follow(scripted([err]))).rejects.toBe(err);
    }
    // x-should-retry: true never widens a submission to what the upstream may have taken.
    const maybe = unavailable(500, { shouldRetry: true });
    await expect(policy(clock).submit(scripted([maybe]))).rejects.toBe(maybe);
  });
});
