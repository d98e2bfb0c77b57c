import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, generate } from '../helpers/app.js';
import { A2_MEDIUM, ASSET_URL, C_EDIT, D_FAST, DATA_URI, E1, F, MINIMAL, openGen } from './generate-support.js';
import type { Gen } from './generate-support.js';

/** Every input URL field, with a body that puts a value in it. */
const URL_FIELDS: [string, string, (url: string) => Record<string, unknown>][] = [
  [A2_MEDIUM, 'image_url', (url) => ({ image_url: url })],
  [A2_MEDIUM, 'image_style_references[0].url', (url) => ({ image_style_references: [{ url }] })],
  [C_EDIT, 'init_video', (url) => ({ init_video: url })],
  [C_EDIT, 'init_image_url', (url) => ({ init_image_url: url })],
  [D_FAST, 'start_image', (url) => ({ start_image: url })],
  [E1, 'start_image', (url) => ({ start_image: url })],
  [E1, 'end_image', (url) => ({ end_image: url })],
  [F, 'start_image', (url) => ({ start_image: url })],
];

const REFUSED = [
  'file:///etc/passwd',
  'gopher://127.0.0.1:6379/_FLUSHALL',
  'ftp://example.com/a.png',
  'javascript:alert(1)',
  'mailto:a@b.c',
  'urn:isbn:0451450523',
  'data:,hello',
  'https:///no-host',
  'https://user:pass@example.com/a.png',
  'example.com/a.png',
];

const ACCEPTED = ['https://example.com/a.png', 'http://example.com:8080/a.png?x=1#f', ASSET_URL, DATA_URI, 'HTTPS://EXAMPLE.COM/A.PNG'];

describe('input URL fields accept only what can be fetched or decoded', () => {
  let g: Gen;
  beforeAll(async () => {
    g = await openGen();
  });
  afterAll(() => g.t.close());

  for (const [model, field, body] of URL_FIELDS) {
    it.each(REFUSED)(`${model} ${field} = %s is 400 naming the field`, async (url) => {
      const res = await generate(g.t, model, { ...MINIMAL[model], ...body(url) });
      expect(errorOf(res, 400)).toContain(`'${field}'`);
    });

    it.each(ACCEPTED)(`${model} ${field} = %s is accepted`, async (url) => {
      const res = await generate(g.t, model, { ...MINIMAL[model], ...body(url) });
      expect(res.statusCode, res.body).toBe(200);
    });
  }

  it('X-Webhook-URL without a host is 400', async () => {
    const res = await generate(g.t, F, MINIMAL[F], { 'x-webhook-url': 'https:///x' });
    expect(errorOf(res, 400)).toContain('X-Webhook-URL');
  });

  it('X-Webhook-URL sent twice is 400, even when both are valid', async () => {
    const res = await g.t.app.inject({
      method: 'POST',
      url: `/generate/${F}`,
      headers: {
        authorization: `Bearer ${g.t.token}`,
        'content-type': 'application/json',
        'x-webhook-url': ['https://a.example.com/h', 'https://b.example.com/h'] as unknown as string,
      },
      payload: JSON.stringify(MINIMAL[F]),
    });
    expect(errorOf(res, 400)).toMatch(/X-Webhook-URL header at most once/);
  });

  it('X-Webhook-URL may carry credentials for the receiver', async () => {
    const res = await generate(g.t, F, MINIMAL[F], { 'x-webhook-url': 'https://hook:secret@hooks.example.com/in' });
    expect(res.statusCode).toBe(200);
  });
});
