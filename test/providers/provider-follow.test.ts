import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readProviders } from '../../src/config/provider-settings.js';
import type { ProviderSettings } from '../../src/config/provider-settings.js';
import { RunStopped } from '../../src/engines/engine.js';
import type { EngineContext, UpstreamState } from '../../src/engines/engine.js';
import { ADAPTERS } from '../../src/engines/providers/adapters.js';
import { ProviderEngine } from '../../src/engines/providers/provider-engine.js';
import type { Clock } from '../../src/lib/clock.js';
import type { Log } from '../../src/lib/log.js';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import { fakeContext, TempDirs } from '../engines/engine-harness.js';
import { startFakeReplicate } from './fakes/fake-replicate.js';
import type { FakeReplicate } from './fakes/fake-replicate.js';

/**
 * The provider engine following a job through long trouble (docs/providers.md, "Money rules"),
 * against the fake Replicate over real HTTP, with a clock on which waits pass at once: a 30 s
 * outage, or an hour's deadline, takes a fraction of a second, and the waits the engine chose are
 * the ones the clock saw.
 */

/** Time moves only by the waits asked of it, each passing at once: the engine's schedule, without the wall time. */
class SkippingClock implements Clock {
  #ms: number;
  constructor(start: number) {
    this.#ms = start;
  }
  nowMs(): number {
    return this.#ms;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.#ms += Math.max(0, ms);
    await new Promise((resolve) => setImmediate(resolve));
    if (signal?.aborted) throw signal.reason;
  }
}

const MODEL = 'image/vendor-b/model-b-1';

function recording(lines: { level: string; msg: string; obj: object }[]): Log {
  const put = (level: string) => (obj: object, msg: string) => void lines.push({ level, msg, obj });
  return { info: put('info'), warn: put('warn'), error: put('error') };
}

describe('the provider engine following a job', () => {
  let rep: FakeReplicate;
  const dirs = new TempDirs();
  const guarded = createGuardedDispatcher({ allowPrivate: true });
  beforeAll(async () => {
    rep = await startFakeReplicate();
  });
  afterAll(async () => {
    await rep.close();
    await guarded.close();
  });
  afterEach(async () => {
    rep.down = undefined;
    rep.statuses = ['starting', 'processing', 'succeeded'];
    await dirs.cleanup();
  });

  function engineAt(clock: Clock, log?: Log): { engine: ProviderEngine; settings: ProviderSettings } {
    const [settings] = readProviders({ rep: { type: 'replicate', base_url: rep.url, api_key_env: 'REP_TOKEN', poll_interval_ms: 1000 } }, 'test.json', { REP_TOKEN: rep.token });
    const engine = new ProviderEngine({
      provider: settings!,
      adapter: ADAPTERS.replicate,
      models: new Map([[MODEL, { route: { provider: settings!, upstream: { model: 'owner/model' } }, endpoint: `/generate/${MODEL}`, schema: undefined, outputTypes: ['image/png'] }]]),
      clock,
      guarded,
      outputMaxBytes: 1024 * 1024,
      ...(log ? { log } : {}),
    });
    return { engine, settings: settings! };
  }

  async function contextAt(clock: Clock, deadlineInMs: number): Promise<EngineContext & { saved: UpstreamState[]; controller: AbortController }> {
    const saved: UpstreamState[] = [];
    const ctx = fakeContext(await dirs.make());
    return Object.assign(ctx, {
      deadlineMs: clock.nowMs() + deadlineInMs,
      saved,
      upstream: { load: async () => saved.at(-1), save: async (s: UpstreamState) => void saved.push(s) },
    });
  }

  it('polls through a 30 s outage of the API and completes the one prediction it submitted', async () => {
    const clock = new SkippingClock(Date.now());
    const { engine } = engineAt(clock);
    const ctx = await contextAt(clock, 3_600_000);
    // Down from the second poll on, for 30 s of the clock: every call answers 503.
    rep.statuses = ['processing', 'processing', 'succeeded'];
    let from: number | undefined;
    const before = rep.submissions();
    rep.down = (method) => {
      if (method !== 'GET') return false;
      const polls = [...rep.predictions.values()].at(-1)?.polls ?? 0;
      if (from === undefined && polls >= 1) from = clock.nowMs();
      return from !== undefined && clock.nowMs() < from + 30_000;
    };
    const outputs = await engine.run({ id: 'job-outage', model: MODEL, request: { prompt: 'a fox' } }, ctx);
    expect(outputs).toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    expect(rep.submissions() - before).toBe(1);
    expect(clock.nowMs() - from!).toBeGreaterThanOrEqual(30_000);
    expect(ctx.saved.at(-1)!.state).toMatchObject({ status: 'succeeded' });
  });

  it('keeps polling an outage until the deadline, then fails upstream_unavailable and cancels the prediction at Replicate', async () => {
    const clock = new SkippingClock(Date.now());
    const lines: { level: string; msg: string; obj: object }[] = [];
    const { engine } = engineAt(clock, recording(lines));
    const ctx = await contextAt(clock, 600_000);
    rep.statuses = ['processing'];
    const started = clock.nowMs();
    // Status polls fail for good; the cancel (a POST) still gets through.
    rep.down = (method) => method === 'GET';
    const err = await engine.run({ id: 'job-deadline', model: MODEL, request: { prompt: 'a fox' } }, ctx).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'upstream_unavailable' });
    // Not given up after a count of failures: retried until the next wait would pass the deadline.
    expect(clock.nowMs() - started).toBeGreaterThan(600_000 - 30_000);
    const id = ctx.saved.at(-1)!.id;
    expect(rep.cancels).toContain(id);
    expect(lines.some((l) => l.level === 'warn' && l.msg === 'upstream keeps failing; giving up on the job')).toBe(true);
  });

  it("retries a download its file host keeps answering 503 until the deadline, then fails upstream_unavailable (the provider's trouble, not a malformed answer)", async () => {
    const clock = new SkippingClock(Date.now());
    const { engine } = engineAt(clock);
    const ctx = await contextAt(clock, 300_000);
    rep.statuses = ['succeeded'];
    const seen = rep.fileHost.requests.length;
    rep.fileHost.fail(1000, 503);
    try {
      const err = await engine.run({ id: 'job-cdn', model: MODEL, request: { prompt: 'a fox' } }, ctx).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'upstream_unavailable' });
      expect(rep.fileHost.requests.length - seen).toBeGreaterThan(5);
    } finally {
      rep.fileHost.heal();
    }
  });

  it('leaves the prediction running when the run stops for a shutdown, and cancels it when the job is cancelled', async () => {
    const clock = new SkippingClock(Date.now());
    const { engine } = engineAt(clock);
    rep.statuses = ['processing'];
    for (const why of ['shutdown', 'cancelled'] as const) {
      const ctx = await contextAt(clock, 3_600_000);
      const run = engine.run({ id: `job-${why}`, model: MODEL, request: { prompt: 'a fox' } }, ctx).catch((e: unknown) => e);
      while (ctx.saved.length === 0) await new Promise((r) => setTimeout(r, 5));
      ctx.controller.abort(new RunStopped(why));
      expect(await run).toBeInstanceOf(RunStopped);
      expect(rep.cancels.includes(ctx.saved[0]!.id)).toBe(why === 'cancelled');
    }
  });
});
