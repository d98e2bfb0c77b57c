import { DefaultQueryCompiler } from 'kysely';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { createGuardedDispatcher } from '../../src/lib/safe-fetch.js';
import { WebhookSender } from '../../src/worker/webhook-sender.js';
import { PUBLIC_URL, createTestApp, silentLog } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { Receiver } from '../helpers/receiver.js';
import { ScriptedEngine, waitFor } from '../helpers/scripted-engine.js';

/**
 * Issue 33's "hot statements compiled once": Kysely's compiler is the last step of building a
 * query, so a statement built per call passes through it every time. Once each statement has been
 * used once, a job's whole life (its create, claim, stage moves, end with its charge and webhook
 * row, the webhook's delivery, the reaper's sweep) and every GET of it must not compile anything.
 */
for (const backend of backends) {
  describe(`hot statements on ${backend.name}`, () => {
    let t: TestApp | undefined;
    const receiver = new Receiver();
    afterEach(async () => {
      await t?.close();
      await receiver.close();
      t = undefined;
    });

    it("compiles no SQL for a job's create, run, end and GETs once each statement has run once", async () => {
      await receiver.start();
      // One slot: a claim's statement varies with the free slots it asks for (its shape), and two
      // slots would make that count depend on timing.
      t = await createTestApp({ backend, worker: { engine: new ScriptedEngine(), pollMs: 20, concurrency: 1 }, realClock: true, allowPrivateUrls: true });
      const app = t;
      const dispatcher = createGuardedDispatcher({ allowPrivate: true });
      const sender = new WebhookSender(
        { webhooks: app.services.webhooks, signals: app.services.signals, clock: app.clock, dispatcher, publicUrl: () => PUBLIC_URL, log: silentLog },
        { concurrency: 8, pollMs: 1000, timeoutMs: 5000 },
      );
      onTestFinished(() => dispatcher.close());
      const auth = { authorization: `Bearer ${app.token}` };
      const jobOnce = async () => {
        const created = await app.app.inject({
          method: 'POST',
          url: '/generate/image/vendor-a/model-a-2/medium-turbo',
          headers: { ...auth, 'content-type': 'application/json', 'x-webhook-url': `${receiver.url}/hook` },
          payload: { prompt: 'a lighthouse at dusk', aspect_ratio: '16:9', resolution: '1K' },
        });
        expect(created.statusCode, created.body).toBe(200);
        const id = (created.json() as { job_id: string }).job_id;
        await waitFor(async () => {
          const got = await app.app.inject({ method: 'GET', url: `/jobs/${id}`, headers: auth });
          return (got.json() as { status: string }).status === 'completed';
        }, `job ${id} to complete`);
        expect(await sender.sendDue()).toBe(1);
        expect(receiver.received.some((r) => r.body.includes(id))).toBe(true);
      };
      await jobOnce();
      await jobOnce();
      const compiled: string[] = [];
      const compile = DefaultQueryCompiler.prototype.compileQuery;
      DefaultQueryCompiler.prototype.compileQuery = function (this: DefaultQueryCompiler, ...args) {
        const out = compile.apply(this, args);
        compiled.push(out.sql);
        return out;
      };
      try {
        await jobOnce();
        await jobOnce();
      } finally {
        DefaultQueryCompiler.prototype.compileQuery = compile;
      }
      expect(compiled.join("\n")).toBe("");
    });
  });
}
