import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/app/runtime.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { cleanup, oneLineError, run, tempDir } from '../e2e/binary.js';

const dir = mkdtempSync(join(tmpdir(), 'mediagen-provider-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const B1 = 'image/vendor-b/model-b-1';
let n = 0;
function configFile(body: Record<string, unknown>): string {
  const path = join(dir, `config-${n++}.json`);
  writeFileSync(path, JSON.stringify(body));
  return path;
}
const ENV = { REPLICATE_API_TOKEN: 'r8_0123456789abcdefghij', OPENAI_API_KEY: 'sk-test-0123456789' };
const load = (body: Record<string, unknown>, env: Record<string, string> = ENV) => loadConfig({ env, configFile: configFile(body) });
const start = async (body: Record<string, unknown>, env: Record<string, string> = ENV) => {
  const runtime = await createRuntime({ ...load(body, env), dataDir: mkdtempSync(join(dir, 'data-')) });
  await runtime.close();
};

describe('providers in the config file', () => {
  it('reads a provider block: the default base URL of its type, /v1 added where the API has it, the key behind a function', () => {
    const config = load({
      providers: {
        rep: { type: 'replicate', api_key_env: 'REPLICATE_API_TOKEN' },
        oai: { type: 'openai', base_url: 'http://localai:8080/', api_key_env: 'OPENAI_API_KEY' },
        up: { type: 'krea', base_url: 'https://mediagen.internal', api_key_env: 'OPENAI_API_KEY', max_attempts: 3 },
      },
    });
    expect(config.providers.map((p) => [p.name, p.type, p.baseUrl])).toEqual([
      ['rep', 'replicate', 'https://api.replicate.com/v1'],
      ['oai', 'openai', 'http://localai:8080/v1'],
      ['up', 'krea', 'https://mediagen.internal'],
    ]);
    expect(config.providers[0]!.apiKey()).toBe(ENV.REPLICATE_API_TOKEN);
    expect(config.providers[2]!.maxAttempts).toBe(3);
    // A dump of the settings (a log line, an error) never carries the key.
    expect(JSON.stringify(config)).not.toContain(ENV.REPLICATE_API_TOKEN);
  });

  it("gives a fal provider fal's storage at rest.fal.ai (both of fal's clients use it) and its webhook keys where fal publishes them", () => {
    const [fal] = load({ providers: { f: { type: 'fal', api_key_env: 'OPENAI_API_KEY' } } }).providers;
    expect(fal).toMatchObject({ baseUrl: 'https://queue.fal.run', storageUrl: 'https://rest.fal.ai', webhookJwksUrl: 'https://rest.alpha.fal.ai/.well-known/jwks.json' });
  });

  it.each([
    [{ x: { type: 'midjourney', api_key_env: 'OPENAI_API_KEY' } }, 'providers.x.type must be one of replicate, fal, openai, krea, got "midjourney"'],
    [{ x: { type: 'openai' } }, 'providers.x.api_key_env must name the environment variable that holds the key'],
    [{ x: { type: 'openai', api_key_env: 'NOT_SET_HERE' } }, 'providers.x: the environment variable NOT_SET_HERE (api_key_env) is not set'],
    [{ x: { type: 'openai', api_key_env: 'OPENAI_API_KEY', api_key: 'sk-inline' } }, "providers.x: unknown key 'api_key'"],
    [{ x: { type: 'openai', api_key_env: 'OPENAI_API_KEY', base_url: 'https://user:pw@api.openai.com' } }, 'providers.x.base_url must be an absolute http(s) URL without credentials'],
    [{ 'Bad Name': { type: 'openai', api_key_env: 'OPENAI_API_KEY' } }, "providers: 'Bad Name' is not a provider name"],
  ])('refuses a bad provider block at start, naming it: %j', (providers, message) => {
    expect(() => load({ providers })).toThrow(ConfigError);
    expect(() => load({ providers })).toThrow(message);
  });

  it('reports an empty key variable as set but empty, not as unset', () => {
    expect(() => load({ providers: { x: { type: 'openai', api_key_env: 'MEDIAGEN_TEST_KEY' } } }, { MEDIAGEN_TEST_KEY: '  ' })).toThrow(
      'providers.x: the environment variable MEDIAGEN_TEST_KEY (api_key_env) is set but empty',
    );
    expect(() => load({ providers: { x: { type: 'openai', api_key_env: 'MEDIAGEN_TEST_KEY' } } }, {})).toThrow('the environment variable MEDIAGEN_TEST_KEY (api_key_env) is not set');
  });

  it.each([
    ['https://user:s3cr3t-pw@api.openai.com/v1', 'providers.x.base_url'],
    ['https://:s3cr3t-pw@api.openai.com', 'providers.x.base_url'],
    ['ftp://admin:s3cr3t-pw@files.example', 'providers.x.base_url'],
    ['https://user:s3cr3t-pw@api.openai.com/v1?x=1', 'providers.x.base_url'],
  ])('never echoes the credentials of a base_url in its error: %s', (base_url, where) => {
    const err = (() => {
      try {
        load({ providers: { x: { type: 'openai', api_key_env: 'OPENAI_API_KEY', base_url } } });
      } catch (e) {
        return e as Error;
      }
      throw new Error('loaded');
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toContain(`${where} must be an absolute http(s) URL without credentials`);
    expect(err.message).not.toContain('s3cr3t-pw');
    expect(err.message).toContain('***@');
  });

  it('never echoes the text around a syntax error of the config file, which may hold credentials', () => {
    const path = join(dir, `config-${n++}.json`);
    // V8 would quote `'https://:s3c`: the start of the password.
    writeFileSync(path, `{"providers": {"x": {"type": "openai", "base_url": 'https://:s3cr3t-pw@api.openai.com'}}}`);
    expect(() => loadConfig({ env: ENV, configFile: path })).toThrow(/cannot read config file .* is not valid JSON/);
    expect(() => loadConfig({ env: ENV, configFile: path })).not.toThrow(/https|s3c/);
  });

  it('never echoes the credentials of a URL setting in its error (public_url)', () => {
    expect(() => load({ public_url: 'ftp://user:s3cr3t-pw@example.com' })).toThrow(ConfigError);
    expect(() => load({ public_url: 'ftp://user:s3cr3t-pw@example.com' })).not.toThrow(/s3cr3t-pw/);
  });

  it('refuses at start a model bound to an undeclared provider, naming the model and the binding', async () => {
    await expect(start({ model_engines: { [B1]: 'provider:nowhere' } })).rejects.toThrow(`model ${B1} is bound to provider:nowhere (model_engines), which providers does not declare; providers: none`);
  });

  it('refuses at start a provider-bound model without a provider model to call (krea needs none)', async () => {
    const providers = { rep: { type: 'replicate', api_key_env: 'REPLICATE_API_TOKEN' }, up: { type: 'krea', api_key_env: 'OPENAI_API_KEY' } };
    await expect(start({ providers, model_engines: { [B1]: 'provider:rep' } })).rejects.toThrow(`model ${B1} is bound to replicate provider 'rep' but names no provider model; set upstream["${B1}"].model`);
    await expect(start({ providers, model_engines: { [B1]: 'provider:up' } })).resolves.toBeUndefined();
    await expect(start({ providers, model_engines: { 'image/*': 'provider:rep' }, upstream: { 'image/*': { model: 'black-forest-labs/flux-schnell' } } })).resolves.toBeUndefined();
  });

  it('refuses an upstream entry that maps no provider-bound model, and an upstream block that is malformed', async () => {
    const providers = { rep: { type: 'replicate', api_key_env: 'REPLICATE_API_TOKEN' } };
    await expect(start({ providers, upstream: { [B1]: { model: 'a/b' } } })).rejects.toThrow(`upstream.${B1} matches no built-in model bound to a provider`);
    expect(() => load({ providers, upstream: { [B1]: { model: 'a/b', outputs: 'images[*' } } })).toThrow('.outputs must be a path or an array of paths');
    expect(() => load({ providers, upstream: { [B1]: { model: 'a/b', prompt: 'x' } } })).toThrow("unknown key 'prompt'");
  });

  it("binds a custom model to a provider with its own upstream block, and refuses one that has an upstream but no provider", async () => {
    const model = { path: 'image/acme/flux-v1', kind: 'image', request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 100, description: 'p' } }, required: ['prompt'] }, price: { fixed: '0.01' } };
    const providers = { rep: { type: 'replicate', api_key_env: 'REPLICATE_API_TOKEN' } };
    await expect(start({ providers, models: [{ ...model, engine: 'provider:rep', upstream: { model: 'black-forest-labs/flux-dev' } }] })).resolves.toBeUndefined();
    await expect(start({ providers, models: [{ ...model, engine: 'remote:gpu', upstream: { model: 'x/y' } }] })).rejects.toThrow('models[0] (image/acme/flux-v1).upstream: the model is not bound to a provider');
  });
});

describe('the configurations of docs/providers.md', () => {
  const doc = readFileSync(new URL('../../docs/providers.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>).filter((b) => 'providers' in b);
  const keys = { REPLICATE_API_TOKEN: 'r8_0123456789abcdefghij', FAL_KEY: 'key-id:0123456789abcdef', OPENAI_API_KEY: 'sk-0123456789', KREA_API_TOKEN: 'k-0123456789' };

  it('has a worked configuration for each provider type', () => {
    const types = new Set(blocks.flatMap((b) => Object.values(b.providers as Record<string, { type: string }>).map((p) => p.type)));
    expect([...types].sort()).toEqual(['fal', 'krea', 'openai', 'replicate']);
  });

  it.each(blocks.map((b, i) => [i, b] as const))('starts a server with configuration %i as it is written', async (_i, block) => {
    await expect(start(block, keys)).resolves.toBeUndefined();
  });
});

describe('mediagen serve with a bad provider block (compiled binary)', { timeout: 60_000 }, () => {
  afterEach(cleanup);

  it('exits 1 with one line naming the unset key variable, and never prints a key', async () => {
    const path = configFile({ providers: { rep: { type: 'replicate', api_key_env: 'MEDIAGEN_TEST_UNSET_KEY' } } });
    const r = await run(['serve', '--port', '0', '--data-dir', tempDir(), '--config', path]);
    expect(oneLineError(r)).toContain('providers.rep: the environment variable MEDIAGEN_TEST_UNSET_KEY (api_key_env) is not set');
    expect(r.stdout).toBe('');
  });
});
