import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OPENAI_DEFAULT_OUTPUTS, openaiAdapter, openaiBaseUrl } from '../../src/engines/providers/openai-adapter.js';
import { createProviderHttp } from '../../src/engines/providers/provider-http.js';
import { UpstreamError } from '../../src/engines/upstream/upstream-error.js';
import type { ProviderAdapter, ProviderSettings } from '../../src/engines/providers/provider-port.js';
import { systemClock } from '../../src/lib/clock.js';
import { startFakeOpenAi } from './fakes/fake-openai.js';
import type { FakeOpenAi } from './fakes/fake-openai.js';

/** The OpenAI Images adapter against a fake written from OpenAI's API reference, over loopback HTTP. */
let fake: FakeOpenAi;

beforeAll(async () => {
  fake = await startFakeOpenAi();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.submissions = 0;
});

function adapterAt(baseUrl: string, opts: { key?: string; timeoutMs?: number } = {}): ProviderAdapter {
  const key = opts.key ?? fake.apiKey;
  const settings: ProviderSettings = { name: 'oai', type: 'openai', baseUrl, apiKeyEnv: 'OPENAI_API_KEY', apiKey: () => key, requestTimeoutMs: opts.timeoutMs ?? 5000, maxAttempts: 5, pollIntervalMs: 100, inlineMaxBytes: 1024 };
  return openaiAdapter(settings, createProviderHttp({ type: 'openai', baseUrl, apiKey: () => key, timeoutMs: settings.requestTimeoutMs, clock: systemClock }));
}

const adapter = (opts?: { key?: string; timeoutMs?: number }) => adapterAt(`${fake.url}/v1`, opts);
const JOB = '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';
const dataUri = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  return err as UpstreamError;
}

describe('openai adapter: a generation', () => {
  it('posts {model, ...input} as JSON to /v1/images/generations with the Bearer key, and is final at once', async () => {
    const a = adapter();
    expect(a.synchronous).toBe(true);
    expect(a.defaultOutputs).toEqual(OPENAI_DEFAULT_OUTPUTS);
    const { handle, status } = await a.submit({ model: 'gpt-image-1', input: { prompt: 'a fox', size: '1024x1024', quality: 'low', n: 2 }, jobId: JOB });
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v1/images/generations');
    expect(req.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toEqual({ model: 'gpt-image-1', prompt: 'a fox', size: '1024x1024', quality: 'low', n: 2 });
    expect(handle).toEqual({ id: `sync-${JOB}` });
    expect(status.state).toBe('succeeded');
    if (status.state !== 'succeeded') return;
    const output = status.output as { data: { b64_json: string }[] };
    expect(output.data).toHaveLength(2);
    expect(Buffer.from(output.data[0]!.b64_json, 'base64').equals(fake.png)).toBe(true);
    // gpt-image-1's token usage, flattened for the job details.
    expect(status.usage).toEqual({ input_tokens: 50, output_tokens: 544, total_tokens: 594, input_image_tokens: 0, input_text_tokens: 10 });
  });

  it('answers URLs when the input asks response_format url (dall-e), with no usage', async () => {
    const { status } = await adapter().submit({ model: 'dall-e-2', input: { prompt: 'a fox', response_format: 'url' }, jobId: JOB });
    if (status.state !== 'succeeded') throw new Error(status.state);
    expect(status.output).toMatchObject({ data: [{ url: `${fake.fileHost.url}/files/1.png` }] });
    expect(status.usage).toBeUndefined();
    // The fake can point its URLs anywhere (a private address, an oversized file): the engine's download checks them.
    fake.outputUrls = ['http://10.0.0.1/secret.png'];
    try {
      const again = await adapter().submit({ model: 'dall-e-2', input: { prompt: 'a fox' }, jobId: JOB });
      expect(again.status).toMatchObject({ state: 'succeeded', output: { data: [{ url: 'http://10.0.0.1/secret.png' }] } });
    } finally {
      fake.outputUrls = undefined;
    }
  });

  it('calls /v1/... whether base_url is given with /v1 or without (a LocalAI root)', async () => {
    await adapterAt(fake.url).submit({ model: 'sd', input: { prompt: 'a' }, jobId: JOB });
    await adapterAt(`${fake.url}/v1/`).submit({ model: 'sd', input: { prompt: 'a' }, jobId: JOB });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/images/generations', '/v1/images/generations']);
  });

  it('openaiBaseUrl keeps a versioned path and adds /v1 to a root or an unversioned prefix', () => {
    expect(openaiBaseUrl('https://api.openai.com/v1')).toBe('https://api.openai.com/v1');
    expect(openaiBaseUrl('https://api.openai.com/v1/')).toBe('https://api.openai.com/v1');
    expect(openaiBaseUrl('https://api.openai.com')).toBe('https://api.openai.com/v1');
    expect(openaiBaseUrl('http://localai:8080/')).toBe('http://localai:8080/v1');
    expect(openaiBaseUrl('https://gateway.example/openai')).toBe('https://gateway.example/openai/v1');
  });

  it('has no status to poll and nothing to cancel', async () => {
    const a = adapter();
    expect((await failure(a.status({ id: `sync-${JOB}` }))).kind).toBe('malformed');
    await expect(a.cancel({ id: `sync-${JOB}` })).resolves.toBeUndefined();
  });
});

describe('openai adapter: an edit', () => {
  it('sends a single data: URI image as the multipart file `image`, with the mask and the text fields', async () => {
    const mask = Buffer.from(fake.png);
    const { status } = await adapter().submit({
      model: 'gpt-image-1',
      input: { prompt: 'add a hat', image: dataUri(fake.png), mask: dataUri(mask), n: 1, quality: 'high' },
      jobId: JOB,
    });
    expect(status.state).toBe('succeeded');
    const req = fake.requests[0]!;
    expect(req.path).toBe('/v1/images/edits');
    expect(req.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(String(req.headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/);
    expect(req.body).toEqual({ model: 'gpt-image-1', prompt: 'add a hat', n: '1', quality: 'high' });
    expect(req.files.map((f) => [f.field, f.name, f.type])).toEqual([
      ['image', 'image-1.png', 'image/png'],
      ['mask', 'mask.png', 'image/png'],
    ]);
    expect(req.files[0]!.bytes.equals(fake.png)).toBe(true);
    if (status.state === 'succeeded') expect(status.usage).toMatchObject({ input_image_tokens: 40 });
  });

  it('sends several images as `image[]` parts, as OpenAI\'s SDK does for gpt-image-1', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    await adapter().submit({ model: 'gpt-image-1', input: { prompt: 'combine', image: [dataUri(fake.png), dataUri(jpeg, 'image/jpeg')] }, jobId: JOB });
    const req = fake.requests[0]!;
    expect(req.files.map((f) => [f.field, f.name, f.type])).toEqual([
      ['image[]', 'image-1.png', 'image/png'],
      ['image[]', 'image-2.jpg', 'image/jpeg'],
    ]);
    expect(req.files[1]!.bytes.equals(jpeg)).toBe(true);
  });

  it('takes `images` as data: URIs or {image_url} objects, sent as `image[]` parts', async () => {
    await adapter().submit({ model: 'gpt-image-1', input: { prompt: 'p', images: [{ image_url: dataUri(fake.png) }] }, jobId: JOB });
    expect(fake.requests[0]!.files.map((f) => f.field)).toEqual(['image[]']);
  });

  it('refuses an image that is not a data: URI, or a malformed one, without calling OpenAI', async () => {
    const err = await failure(adapter().submit({ model: 'gpt-image-1', input: { prompt: 'p', image: 'https://example.com/a.png' }, jobId: JOB }));
    expect(err.kind).toBe('rejected');
    expect(err.message).toContain('data: URI');
    expect((await failure(adapter().submit({ model: 'gpt-image-1', input: { prompt: 'p', image: 'data:image/png;base64,@@@' }, jobId: JOB }))).kind).toBe('rejected');
    expect(fake.submissions).toBe(0);
  });
});

describe('openai adapter: failures', () => {
  it('a 429 with Retry-After is unavailable, with the wait', async () => {
    fake.fail429(1, 7);
    const err = await failure(adapter().submit({ model: 'gpt-image-1', input: { prompt: 'a' }, jobId: JOB }));
    expect(err).toMatchObject({ kind: 'unavailable', status: 429, retryAfterMs: 7000 });
    expect(err.message).toContain('Rate limit reached');
  });

  it('a 500 is unavailable', async () => {
    fake.fail500();
    expect(await failure(adapter().submit({ model: 'gpt-image-1', input: { prompt: 'a' }, jobId: JOB }))).toMatchObject({ kind: 'unavailable', status: 500 });
  });

  it('a 400 is rejected with OpenAI\'s message, cleaned of the key', async () => {
    fake.reject(`Your request was rejected by the safety system (key ${fake.apiKey}).`, { code: 'moderation_blocked', type: 'image_generation_user_error' });
    const err = await failure(adapter().submit({ model: 'gpt-image-1', input: { prompt: 'a' }, jobId: JOB }));
    expect(err).toMatchObject({ kind: 'rejected', status: 400 });
    expect(err.message).toContain('rejected by the safety system');
    expect(err.message).not.toContain(fake.apiKey);
  });

  it('a wrong key is rejected (401) and the message OpenAI echoes does not carry it', async () => {
    const wrong = 'sk-proj-wrongwrongwrong1234';
    const err = await failure(adapter({ key: wrong }).submit({ model: 'gpt-image-1', input: { prompt: 'a' }, jobId: JOB }));
    expect(err).toMatchObject({ kind: 'rejected', status: 401 });
    // cleanUpstreamMessage also blanks the word after "key" (its `Key <token>` pattern): the start of OpenAI's sentence stays.
    expect(err.message).toContain('Incorrect API');
    expect(err.message).not.toContain(wrong);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${wrong}`);
  });

  it('an answer that is not JSON, has no data, or an image with neither b64_json nor url is malformed', async () => {
    fake.failMalformed();
    fake.answerNext({ created: 1 });
    fake.answerNext({ created: 1, data: [] });
    fake.answerNext({ created: 1, data: [{ revised_prompt: 'x' }] });
    for (let i = 0; i < 4; i++) {
      expect((await failure(adapter().submit({ model: 'gpt-image-1', input: { prompt: 'a' }, jobId: JOB }))).kind).toBe('malformed');
    }
  });

  it('a call the provider does not answer within the request timeout is unavailable', async () => {
    fake.hold();
    try {
      const err = await failure(adapter({ timeoutMs: 200 }).submit({ model: 'gpt-image-1', input: { prompt: 'a' }, jobId: JOB }));
      expect(err.kind).toBe('unavailable');
      expect(err.message).toContain('did not answer within 200 ms');
      // The fake saw the client go away: what a test of the engine's abort can count on.
      await expect.poll(() => fake.aborted).toBe(1);
    } finally {
      fake.release();
    }
  });
});
