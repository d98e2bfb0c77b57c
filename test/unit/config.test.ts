import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, publicUrlFor } from '../../src/config/config.js';
import { OPTIONS } from '../../src/config/options.js';
import { buildCatalog } from '../../src/models/catalog.js';
import { PRICE_RULES } from '../../src/models/prices.js';
import { priceTableFor } from '../../src/app/settings.js';

const file = (content: unknown) => {
  const path = join(mkdtempSync(join(tmpdir(), 'mediagen-cfg-')), 'config.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({ env: {} });
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', dataDir: resolve('./data'), allowPrivateUrls: false, publicUrl: undefined });
    expect(publicUrlFor(c, 8080)).toBe('http://127.0.0.1:8080');
  });

  it('takes flags over environment over config file over defaults', () => {
    const path = file({ port: 1111, host: '0.0.0.0', data_dir: '/tmp/x' });
    const env = { MEDIAGEN_PORT: '2222', MEDIAGEN_HOST: '::1' };
    expect(loadConfig({ env: {}, configFile: path })).toMatchObject({ port: 1111, host: '0.0.0.0', dataDir: '/tmp/x' });
    expect(loadConfig({ env, configFile: path })).toMatchObject({ port: 2222, host: '::1' });
    expect(loadConfig({ env, configFile: path, flags: { port: '3333' } })).toMatchObject({ port: 3333, host: '::1' });
  });

  it('reads the config file named by MEDIAGEN_CONFIG', () => {
    expect(loadConfig({ env: { MEDIAGEN_CONFIG: file({ port: 4444 }) } }).port).toBe(4444);
  });

  it('derives the public URL from host and the bound port, bracketing IPv6', () => {
    expect(publicUrlFor(loadConfig({ env: {}, flags: { host: '::1' } }), 9000)).toBe('http://[::1]:9000');
    expect(publicUrlFor(loadConfig({ env: {}, flags: { 'public-url': 'https://gen.example.com/' } }), 9000)).toBe('https://gen.example.com');
  });

  it.each([
    [{ flags: { port: '70000' } }, /port/],
    [{ flags: { port: 'eighty' } }, /port/],
    [{ flags: { 'public-url': 'ftp://x' } }, /public-url/],
    [{ env: { MEDIAGEN_ALLOW_PRIVATE_URLS: 'maybe' } }, /MEDIAGEN_ALLOW_PRIVATE_URLS/],
    [{ flags: { 'log-level': 'loud' } }, /log-level/],
    [{ flags: { 'database-url': 'mysql://x' } }, /database-url must be a postgres/],
  ])('refuses bad values with a message naming the setting (%j)', (opts, message) => {
    expect(() => loadConfig({ env: {}, ...opts })).toThrow(message);
  });

  it.each([
    ['not JSON', '{port:'],
    ['not an object', '[1]'],
    ['an unknown key', { prot: 1 }],
    ['deprecations that are not an array', { deprecations: {} }],
    ['a deprecation without a date', { deprecations: [{ model: 'video/vendor-f/model-f' }] }],
    ['a deprecation with an impossible date', { deprecations: [{ model: 'video/vendor-f/model-f', sunset_date: '2027-02-30' }] }],
    ['a deprecation with an unknown key', { deprecations: [{ model: 'video/vendor-f/model-f', sunset_date: '2027-01-01', when: 1 }] }],
  ])('refuses a config file with %s', (_name, content) => {
    expect(() => loadConfig({ env: {}, configFile: file(content) })).toThrow(ConfigError);
  });

  it('reads deprecations, and the catalog refuses one for an unknown model', () => {
    const dep = { model: 'video/vendor-f/model-f', sunset_date: '2027-01-01', replacement: 'video/vendor-d/model-d-fast', migration_url: 'https://example.com/m' };
    const c = loadConfig({ env: {}, configFile: file({ deprecations: [dep] }) });
    expect(c.deprecations).toEqual([dep]);
    expect(buildCatalog({ deprecations: c.deprecations }).get('video/vendor-f/model-f')!.deprecation).toMatchObject({
      sunsetDate: '2027-01-01',
      sunsetMs: Date.UTC(2027, 0, 1),
    });
    expect(() => buildCatalog({ deprecations: [{ model: 'video/nobody/nothing', sunset_date: '2027-01-01' }] })).toThrow(/unknown model/);
  });

  it('docs/config.md documents every option by flag, environment variable and file key', () => {
    const doc = readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8');
    for (const o of OPTIONS) {
      expect(doc).toContain(`--${o.flag}`);
      expect(doc).toContain(o.env);
      expect(doc).toContain(`\`${o.key}\``);
    }
    expect(doc).toContain('MEDIAGEN_CONFIG');
    expect(doc).toContain('deprecations');
  });
});

describe('config file prices', () => {
  it('reads decimal USD strings and numbers into micro-USD exactly', () => {
    const config = loadConfig({ env: {}, configFile: file({ prices: { 'video/vendor-f/model-f': { per_request: '0.4515' }, 'image/vendor-b/model-b-1': { standard: 0.0175 } } }) });
    expect(config.prices).toEqual({ 'video/vendor-f/model-f': { per_request: 451_500 }, 'image/vendor-b/model-b-1': { standard: 17_500 } });
  });

  it.each([
    [{ prices: [] }, 'prices must be an object of model path to {rate: USD}'],
    [{ prices: { 'video/vendor-f/model-f': 3 } }, 'prices.video/vendor-f/model-f must be an object of rate name to USD'],
    [{ prices: { 'video/vendor-f/model-f': { per_request: '-1' } } }, 'prices.video/vendor-f/model-f.per_request must be a USD amount such as "0.035"'],
    [{ prices: { 'video/vendor-f/model-f': { per_request: '0.0000001' } } }, 'at most 6 decimal places'],
    [{ prices: { 'video/vendor-f/model-f': { per_request: true } } }, 'got true'],
  ])('refuses %j', (content, message) => {
    expect(() => loadConfig({ env: {}, configFile: file(content) })).toThrow(ConfigError);
    expect(() => loadConfig({ env: {}, configFile: file(content) })).toThrow(message);
  });

  it('stops the start on an unknown model or rate name', () => {
    const config = loadConfig({ env: {}, configFile: file({ prices: { 'video/vendor-f/model-f': { per_second: '1' } } }) });
    expect(() => priceTableFor(config, buildCatalog({}))).toThrow(ConfigError);
    expect(() => priceTableFor(config, buildCatalog({}))).toThrow("prices.video/vendor-f/model-f: unknown rate 'per_second'; its rates are per_request");
  });

  it('docs/config.md lists every rate with its default', () => {
    const doc = readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8');
    const table = priceTableFor(loadConfig({ env: {} }), buildCatalog({}));
    const rows = [...doc.matchAll(/^\| `([A-Za-z0-9/.-]+)` \| ((?:`[a-z0-9_]+`(?:, )?)+) \| ([\d., ]+) \|/gm)];
    expect(rows.map((r) => r[1]).sort()).toEqual(Object.keys(PRICE_RULES).sort());
    for (const [, model, names, defaults] of rows) {
      const documented = Object.fromEntries(
        names!.split(', ').map((n, i) => [n.replace(/`/g, ''), Math.round(Number(defaults!.split(', ')[i]) * 1_000_000)]),
      );
      expect(documented, model).toEqual(table.rates(model!));
    }
  });
});

describe('output store settings', () => {
  it('keeps outputs on disk by default, and refuses presigned URLs there', () => {
    expect(loadConfig({ env: {} }).outputStore).toEqual({ kind: 'disk' });
    expect(() => loadConfig({ env: { MEDIAGEN_OUTPUT_URLS: 'presign' } })).toThrow('output_urls presign needs an s3:// output_store');
  });

  it('reads bucket and prefix from s3:// and fills endpoint and region from the AWS variables', () => {
    const config = loadConfig({ env: { MEDIAGEN_OUTPUT_STORE: 's3://media-out/prod/outputs/', AWS_ENDPOINT_URL: 'http://minio:9000', AWS_REGION: 'eu-west-1' } });
    expect(config.outputStore).toEqual({ kind: 's3', bucket: 'media-out', prefix: 'prod/outputs', endpoint: 'http://minio:9000', region: 'eu-west-1', forcePathStyle: false, credentials: undefined });
    const own = loadConfig({
      env: { AWS_ENDPOINT_URL: 'http://ignored:1', AWS_ENDPOINT_URL_S3: 'http://s3-only:2' },
      flags: { 'output-store': 's3://bucket1', 's3-region': 'us-west-2', 's3-force-path-style': true, 's3-access-key-id': 'AK', 's3-secret-access-key': 'SK' },
    });
    expect(own.outputStore).toEqual({ kind: 's3', bucket: 'bucket1', prefix: '', endpoint: 'http://s3-only:2', region: 'us-west-2', forcePathStyle: true, credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' } });
  });

  it('binds the metrics port to loopback by default, whatever host the API listens on', () => {
    expect(loadConfig({ env: { MEDIAGEN_HOST: '0.0.0.0', MEDIAGEN_METRICS_PORT: '9464' } })).toMatchObject({ host: '0.0.0.0', metricsHost: '127.0.0.1', metricsPort: 9464 });
    expect(loadConfig({ env: { MEDIAGEN_METRICS_HOST: '10.0.0.5' } }).metricsHost).toBe('10.0.0.5');
  });

  it('refuses a metrics token shorter than 16 characters, without echoing it', () => {
    expect(() => loadConfig({ env: { MEDIAGEN_METRICS_TOKEN: 'short-secret' } })).toThrow(/MEDIAGEN_METRICS_TOKEN must be at least 16 characters/);
    expect(() => loadConfig({ env: { MEDIAGEN_METRICS_TOKEN: 'short-secret' } })).not.toThrow(/short-secret/);
    expect(loadConfig({ env: { MEDIAGEN_METRICS_TOKEN: 'a-long-enough-metrics-token' } }).metricsToken).toBe('a-long-enough-metrics-token');
  });

  it('refuses a bad bucket URL and half a key pair', () => {
    for (const bad of ['s3://', 's3://A', 'gs://bucket', 's3://bucket/a b']) {
      expect(() => loadConfig({ env: { MEDIAGEN_OUTPUT_STORE: bad } }), bad).toThrow('MEDIAGEN_OUTPUT_STORE must be disk or s3://bucket[/prefix]');
    }
    expect(() => loadConfig({ env: { MEDIAGEN_OUTPUT_STORE: 's3://bucket1', MEDIAGEN_S3_ACCESS_KEY_ID: 'AK' } })).toThrow('set both or neither');
  });
});
