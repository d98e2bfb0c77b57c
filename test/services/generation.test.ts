import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/error-catalogue.js';
import { OPTION_LABELS } from '../../src/http/request/request-headers.js';
import type { AuthContext } from '../../src/services/identity/identity.js';
import type { GenerationOptions, GenerationPolicy } from '../../src/services/jobs/generation.js';
import { PUBLIC_URL, createTestApp, errorOf, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';

/**
 * The use case "create a generation job" called directly, as an MCP tool or a node-app step would:
 * the same jobs and the same refusals, as typed domain errors with the messages the HTTP API gives.
 */

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';
const RETIRED = 'image/vendor-g/model-g-3';
const NO_OPTIONS: GenerationOptions = { webhookUrl: null, zeroDataRetention: false, idempotencyKey: null };
const POLICY: GenerationPolicy = { allowPrivateUrls: false, publicUrl: PUBLIC_URL, labels: OPTION_LABELS };

let t: TestApp;
let caller: AuthContext;
beforeAll(async () => {
  t = await createTestApp();
  caller = await t.services.identity.authenticate(`Bearer ${t.token}`);
});
afterAll(() => t.close());

const create = (model: string, body: unknown, options: Partial<GenerationOptions> = {}) =>
  t.services.generation.create({ model, body, caller, options: { ...NO_OPTIONS, ...options } }, POLICY);

/** The domain error the use case throws, and the HTTP API's message for the same request. */
async function refusal(model: string, body: unknown, options: Partial<GenerationOptions>, headers: Record<string, string>, status: number) {
  const err = await create(model, body, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return { err: err as DomainError, http: errorOf(await generate(t, model, body, headers), status) };
}

describe('the generation use case, without HTTP', () => {
  it('creates a queued job from a valid body, with the defaults filled in, and stores it', async () => {
    const created = await create(B1, { prompt: 'a blue bird' }, { webhookUrl: 'https://hooks.example.com/x' });
    expect(created.replayed).toBe(false);
    expect(created.job).toMatchObject({ type: B1, status: 'queued', completed_at: null, result: null });
    const stored = await t.store.jobs.getJob(caller.apiUserId, created.job.job_id);
    expect(stored?.request).toEqual({ prompt: 'a blue bird', width: 1024, height: 1024, mode: 'standard', style: 'auto' });
    expect(stored?.webhookUrl).toBe('https://hooks.example.com/x');
  });

  it('replays the first job for the same idempotency key', async () => {
    const first = await create(B1, { prompt: 'once' }, { idempotencyKey: 'direct-1' });
    const again = await create(B1, { prompt: 'once' }, { idempotencyKey: 'direct-1' });
    expect(again).toEqual({ job: first.job, replayed: true });
  });

  it('refuses an invalid body with invalid_request and the API message', async () => {
    const { err, http } = await refusal(A2, { prompt: 'x', aspect_ratio: '5:4', resolution: '1K' }, {}, {}, 400);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toBe(http);
    expect(err.message).toBe(`'aspect_ratio' must be one of "1:1", "4:3", "3:2", "16:9", "2.35:1", "4:5", "2:3", "9:16"`);
  });

  it('refuses a retired model with model_unavailable and the fields of the 410 body', async () => {
    const err = (await create(RETIRED, {}).then(
      () => undefined,
      (e: unknown) => e,
    )) as DomainError;
    const res = await generate(t, RETIRED, {});
    expect(res.statusCode).toBe(410);
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('model_unavailable');
    expect({ error: err.message, ...err.details.fields }).toEqual(res.json());
    expect(err.details.fields).toMatchObject({ reason: 'deprecated', sunset_date: '2026-05-13', replacement: 'image/vendor-g/model-g-5-lite' });
  });

  it('refuses a bad webhook URL with invalid_request, named as the transport names it', async () => {
    const { err, http } = await refusal(B1, { prompt: 'x' }, { webhookUrl: 'ftp://hooks.example.com' }, { 'x-webhook-url': 'ftp://hooks.example.com' }, 400);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toBe(http);
    expect(err.message).toBe('X-Webhook-URL must be an absolute http or https URL');
  });

  it('refuses zero data retention on a model without it, with the API message', async () => {
    const { err, http } = await refusal(B1, { prompt: 'x' }, { zeroDataRetention: true }, { 'x-api-zero-data-retention': '1' }, 400);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toBe(http);
    expect(err.message).toBe(`X-Api-Zero-Data-Retention is not supported by ${B1}`);
  });

  it('refuses a literal loopback input URL unless the policy allows private URLs', async () => {
    const body = { prompt: 'x', aspect_ratio: '1:1', resolution: '1K', image_url: 'http://127.0.0.1/a.png' };
    const { err, http } = await refusal(A2, body, {}, {}, 400);
    expect(err.message).toBe(http);
    expect(err.message).toMatch(/^image_url refused: 127\.0\.0\.1 is a loopback address/);
    const allowed = await t.services.generation.create({ model: A2, body: { ...body }, caller, options: NO_OPTIONS }, { ...POLICY, allowPrivateUrls: true });
    expect(allowed.job.status).toBe('queued');
  });

  it('says not_found for a model the catalog does not have', async () => {
    await expect(create('image/vendor-x/nothing', {})).rejects.toMatchObject({ code: 'not_found', message: "model 'image/vendor-x/nothing' not found" });
  });
});
