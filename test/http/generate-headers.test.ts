import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A2_PATHS, GENERATION_PATHS, MINIMAL, accept, openGen, reject } from './generate-support.js';
import type { Gen } from './generate-support.js';
import { MODELS } from '../../src/models/registry.js';

/** Spec 4.2 and 6: the X-Api-Zero-Data-Retention and X-Webhook-URL request headers. */

const ZDR = 'x-api-zero-data-retention';
const WEBHOOK = 'x-webhook-url';
/** Which models take zero data retention is their modules' word (model-a-2 and the issue-16 models). */
const takesZdr = (p: string) => MODELS.some((m) => m.path === p && m.zeroDataRetention);
const ZDR_PATHS = GENERATION_PATHS.filter(takesZdr);
const NON_ZDR_PATHS = GENERATION_PATHS.filter((p) => !takesZdr(p));

/** An absolute https URL of exactly `length` characters. */
const webhookOfLength = (length: number) => {
  const head = 'https://hooks.example.com/';
  return head + 'w'.repeat(length - head.length);
};

let g: Gen;
beforeAll(async () => {
  g = await openGen();
});
afterAll(() => g.t.close());

describe.each(ZDR_PATHS)('X-Api-Zero-Data-Retention on POST /generate/%s', (path) => {
  it('accepts the value 1 and stores zero data retention on the job', async () => {
    const { stored } = await accept(g, path, MINIMAL[path], { [ZDR]: '1' });
    expect(stored.zeroDataRetention).toBe(true);
  });

  it('stores zero data retention off without the header', async () => {
    const { stored } = await accept(g, path, MINIMAL[path]);
    expect(stored.zeroDataRetention).toBe(false);
  });

  it.each(['0', 'true', 'yes', '01', ' 2', 'on'])('refuses the value %j with 400 naming the header', async (value) => {
    await reject(g, path, MINIMAL[path], 'X-Api-Zero-Data-Retention', { [ZDR]: value });
  });

  it('is matched case-insensitively by header name', async () => {
    const { stored } = await accept(g, path, MINIMAL[path], { 'X-API-Zero-Data-Retention': '1' });
    expect(stored.zeroDataRetention).toBe(true);
  });
});

describe.each(NON_ZDR_PATHS)('X-Api-Zero-Data-Retention on POST /generate/%s', (path) => {
  it('refuses the header, even with the value 1, with 400 naming it', async () => {
    await reject(g, path, MINIMAL[path], 'X-Api-Zero-Data-Retention', { [ZDR]: '1' });
  });

  it('refuses the header with the value 0 too', async () => {
    await reject(g, path, MINIMAL[path], 'X-Api-Zero-Data-Retention', { [ZDR]: '0' });
  });
});

describe.each(GENERATION_PATHS)('X-Webhook-URL on POST /generate/%s', (path) => {
  it.each([
    'https://hooks.example.com/mediagen',
    'http://hooks.example.com:8080/callback?job=1',
    'https://user:pw@hooks.example.com:8443/a/b#frag',
    'HTTPS://HOOKS.EXAMPLE.COM/UPPER',
    'https://hooks.example.com/caf%C3%A9?q=a%20b',
    'http://[2606:4700:4700::1111]:8080/ipv6',
  ])('accepts %s and stores it as the job webhookUrl', async (url) => {
    const { stored } = await accept(g, path, MINIMAL[path], { [WEBHOOK]: url });
    expect(stored.webhookUrl).toBe(url);
  });

  it('accepts a URL of exactly 2048 characters', async () => {
    const url = webhookOfLength(2048);
    expect(url).toHaveLength(2048);
    const { stored } = await accept(g, path, MINIMAL[path], { [WEBHOOK]: url });
    expect(stored.webhookUrl).toBe(url);
  });

  it('refuses a URL of 2049 characters with 400 naming X-Webhook-URL', async () => {
    const url = webhookOfLength(2049);
    expect(url).toHaveLength(2049);
    await reject(g, path, MINIMAL[path], 'X-Webhook-URL', { [WEBHOOK]: url });
  });

  it.each([
    ['a relative URL', '/hooks/mediagen'],
    ['a host without a scheme', 'hooks.example.com/mediagen'],
    ['an ftp:// URL', 'ftp://hooks.example.com/mediagen'],
    ['a mailto: URI', 'mailto:ops@example.com'],
    ['a javascript: URI', 'javascript:alert(1)'],
    ['a file:// URL', 'file:///etc/passwd'],
    ['garbage', 'not a url at all'],
    ['a scheme without a host', 'http://'],
    ['an empty value', ''],
    ['a data: URI', 'data:text/plain;base64,aGk='],
    ['an http URI without //', 'https:hooks.example.com/mediagen'],
    ['an http URI with a single slash', 'http:/hooks.example.com/mediagen'],
    ['backslashes instead of slashes', 'http:\\\\hooks.example.com\\mediagen'],
    ['an unescaped space', 'https://hooks.example.com/media gen'],
    ['unescaped angle brackets', 'https://hooks.example.com/<script>'],
    ['a broken percent-escape', 'https://hooks.example.com/%zz'],
  ])('refuses %s with 400 naming X-Webhook-URL', async (_what, url) => {
    await reject(g, path, MINIMAL[path], 'X-Webhook-URL', { [WEBHOOK]: url });
  });

  it('stores no webhook URL without the header', async () => {
    const { stored } = await accept(g, path, MINIMAL[path]);
    expect(stored.webhookUrl).toBeNull();
  });
});

describe('both headers together', () => {
  it('stores the webhook URL and zero data retention on one model-a-2 job', async () => {
    const { stored } = await accept(g, A2_PATHS[0], MINIMAL[A2_PATHS[0]], {
      [ZDR]: '1',
      [WEBHOOK]: 'https://hooks.example.com/both',
    });
    expect(stored.zeroDataRetention).toBe(true);
    expect(stored.webhookUrl).toBe('https://hooks.example.com/both');
  });

  it('creates no job when a header is refused', async () => {
    await reject(g, A2_PATHS[0], MINIMAL[A2_PATHS[0]], 'X-Webhook-URL', { [ZDR]: '1', [WEBHOOK]: 'ftp://x.example.com' });
    const jobs = await g.t.store.jobs.listJobs({ apiUserId: g.apiUserId, limit: 10 });
    expect(jobs).toHaveLength(0);
  });
});
