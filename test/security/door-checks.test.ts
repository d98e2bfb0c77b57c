import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { urlFieldsOf } from '../../src/models/private-urls.js';
import { buildCatalog } from '../../src/models/catalog.js';
import { createJob, createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { MINIMAL as GENERATE_MINIMAL } from '../http/generate-support.js';

/** The smallest valid body of every model, style training (POST /styles/train) included. */
const MINIMAL: Readonly<Record<string, Json>> = { ...GENERATE_MINIMAL, loraTraining: { name: 'ink', urls: ['https://example.com/style.png'] } };

/**
 * Refused at the door: without --allow-private-urls, an X-Webhook-URL or input URL whose host is a
 * literal refused address (or localhost) is 400 naming the field, and no job is created.
 */

const ALLOW = 'start the server with --allow-private-urls to allow it';

/** Each literal form, and what the refusal says of it (the URL parser normalises IPv4 forms). */
const REFUSED: readonly [string, string][] = [
  ['http://127.0.0.1/x.png', '127.0.0.1 is a loopback address'],
  ['http://2130706433/x.png', '127.0.0.1 is a loopback address'],
  ['http://0x7f.1/x.png', '127.0.0.1 is a loopback address'],
  ['http://017700000001/x.png', '127.0.0.1 is a loopback address'],
  ['https://127.1:8443/x.png', '127.0.0.1 is a loopback address'],
  ['http://10.0.0.1/x.png', '10.0.0.1 is a private address'],
  ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is the cloud metadata address'],
  ['http://[::1]/x.png', '::1 is a loopback address'],
  ['http://[::ffff:127.0.0.1]/x.png', '::ffff:7f00:1 is a loopback address'],
  ['http://[fd00::1]/x.png', 'fd00::1 is a unique-local address'],
  ['http://localhost:8080/x.png', 'localhost is a loopback name'],
  ['http://foo.localhost/x.png', 'foo.localhost is a loopback name'],
  ['http://LOCALHOST./x.png', 'localhost is a loopback name'],
];

/** Public literals, names (judged at connect time, not here) and data: URIs pass the door. */
const PASSED = ['http://93.184.216.34/x.png', 'http://[2606:2800:220:1:248:1893:25c8:1946]/x.png', 'https://internal.example/x.png', 'data:image/png;base64,iVBORw0KGgo='];

const catalog = buildCatalog({});
const ENTRIES = catalog.entries.filter((e) => e.request);

/** Every URL field the API takes, as docs/inputs.md lists them. */
const EXPECTED_FIELDS: Readonly<Record<string, string[]>> = {
  'image/vendor-a/model-a-2': ['image_style_references[].url', 'image_url'],
  'image/vendor-b/model-b-1': [],
  'video/vendor-c/model-c-edit': ['init_video', 'init_image_url'],
  'video/vendor-d/model-d-fast': ['start_image'],
  'video/vendor-e/model-e-1': ['start_image', 'end_image'],
  'video/vendor-f/model-f': ['start_image'],
  'audio/vendor-l/model-l-1': [],
  'enhance/vendor-j/standard-enhance': ['image_url'],
  'enhance/vendor-j/generative-enhance': ['image_url'],
  '3d/vendor-k/model-k-1': ['image_url'],
  'enhance/vendor-j/video-upscale': ['video_url'],
  loraTraining: ['urls[]'],
};

/** Every string property declared with format `uri`, however its pattern is written. */
function uriStrings(schema: Json, name = ''): string[] {
  const out: string[] = [];
  for (const branch of (schema.anyOf as Json[] | undefined) ?? []) out.push(...uriStrings(branch, name));
  if (schema.type === 'string' && schema.format === 'uri') out.push(name);
  for (const [k, sub] of Object.entries((schema.properties as Record<string, Json> | undefined) ?? {})) out.push(...uriStrings(sub, name ? `${name}.${k}` : k));
  if (schema.items) out.push(...uriStrings(schema.items as Json, `${name}[]`));
  return out;
}

/** A body holding `url` in `field` (`refs[].url` becomes `{refs: [{url}]}`), and the name a message uses. */
function bodyWith(model: string, field: string, url: string): { body: Json; name: string } {
  const nested = field
    .split('.')
    .reduceRight<unknown>((inner, seg) => (seg.endsWith('[]') ? { [seg.slice(0, -2)]: [inner] } : { [seg]: inner }), url);
  return { body: { ...MINIMAL[model], ...(nested as Json) }, name: field.replace(/\[\]/g, '[0]') };
}

const CASES = ENTRIES.flatMap((e) => urlFieldsOf(e.request!).map((field) => [e.path, field] as const));

describe('which fields are URL fields comes from the request schemas', () => {
  it.each(ENTRIES.map((e) => [e.path, e] as const))('%s: every URL field is checked, and no other', (_path, entry) => {
    const fields = urlFieldsOf(entry.request!);
    expect(fields.sort()).toEqual([...EXPECTED_FIELDS[entry.path.replace(/\/(medium|large|medium-turbo)$/, '')]!].sort());
    // Nothing declared as a URI escapes the door check by being written another way.
    expect([...new Set(uriStrings(entry.request as unknown as Json))].sort()).toEqual([...fields].sort());
  });

  it('the cases below cover every URL field of every model', () => {
    expect(CASES.length).toBe(ENTRIES.reduce((n, e) => n + urlFieldsOf(e.request!).length, 0));
    expect(CASES.length).toBeGreaterThanOrEqual(12);
  });
});

describe('without --allow-private-urls', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ limits: { maxConcurrentJobs: 100_000, maxBackloggedJobs: 1_000_000 } });
  });
  afterAll(() => t.close());

  describe.each(CASES)('%s %s', (model, field) => {
    it.each(REFUSED)('%s is 400 naming the field and how to allow it', async (url, why) => {
      const { body, name } = bodyWith(model, field, url);
      expect(errorOf(await createJob(t, model, body), 400)).toBe(`${name} refused: ${why}; ${ALLOW}`);
    });

    it.each(PASSED)('%s passes the door', async (url) => {
      const { body } = bodyWith(model, field, url);
      const res = await createJob(t, model, body);
      expect(res.statusCode, res.body).toBe(200);
    });
  });

  describe.each(ENTRIES.map((e) => e.path))('X-Webhook-URL on %s', (model) => {
    it.each(REFUSED)('%s is 400 naming the header and how to allow it', async (url, why) => {
      const res = await createJob(t, model, MINIMAL[model], { 'x-webhook-url': url });
      expect(errorOf(res, 400)).toBe(`X-Webhook-URL refused: ${why}; ${ALLOW}`);
    });

    it.each(PASSED.filter((u) => !u.startsWith('data:')))('%s passes the door', async (url) => {
      const res = await createJob(t, model, MINIMAL[model], { 'x-webhook-url': url });
      expect(res.statusCode, res.body).toBe(200);
    });
  });

  it('names the item of an array that is refused, after public ones', async () => {
    const body = {
      ...MINIMAL['image/vendor-a/model-a-2/medium'],
      image_style_references: [{ url: 'https://example.com/a.png' }, { url: 'https://example.com/b.png' }, { url: 'http://10.1.2.3/c.png' }],
    };
    const res = await generate(t, 'image/vendor-a/model-a-2/medium', body);
    expect(errorOf(res, 400)).toBe(`image_style_references[2].url refused: 10.1.2.3 is a private address; ${ALLOW}`);
  });

  it('creates no job for a refused request', async () => {
    const before = ((await get(t, '/jobs?limit=1000')).json() as { items: unknown[] }).items.length;
    const res = await generate(t, 'video/vendor-f/model-f', { prompt: 'x', start_image: 'http://127.0.0.1/x.png' }, { 'x-webhook-url': 'https://hooks.example.com/' });
    expect(res.statusCode).toBe(400);
    expect(((await get(t, '/jobs?limit=1000')).json() as { items: unknown[] }).items).toHaveLength(before);
  });
});

describe('with --allow-private-urls', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ allowPrivateUrls: true, limits: { maxConcurrentJobs: 100_000, maxBackloggedJobs: 1_000_000 } });
  });
  afterAll(() => t.close());

  describe.each(CASES)('%s %s', (model, field) => {
    it.each(REFUSED.map(([url]) => url))('%s is accepted', async (url) => {
      const res = await createJob(t, model, bodyWith(model, field, url).body);
      expect(res.statusCode, res.body).toBe(200);
    });
  });

  it.each(REFUSED.map(([url]) => url))('X-Webhook-URL %s is accepted', async (url) => {
    const res = await generate(t, 'image/vendor-b/model-b-1', MINIMAL['image/vendor-b/model-b-1'], { 'x-webhook-url': url });
    expect(res.statusCode, res.body).toBe(200);
  });
});
