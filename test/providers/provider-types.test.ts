import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { PROVIDER_TYPE_LIST, PROVIDER_TYPES, providerType, providerTypeOf } from '../../src/config/provider-types.js';
import type { ProviderType } from '../../src/config/provider-types.js';
import { ADAPTERS } from '../../src/engines/providers/adapters.js';
import { createProviderHttp } from '../../src/engines/providers/provider-http.js';
import { systemClock } from '../../src/lib/clock.js';

/** Each provider type declared once (config/provider-types.ts), and every place that needs a fact of a type reading it there. */

const dir = mkdtempSync(join(tmpdir(), 'mediagen-provider-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const load = (providers: Record<string, unknown>) => {
  const path = join(dir, `config-${n++}.json`);
  writeFileSync(path, JSON.stringify({ providers }));
  return loadConfig({ env: { KEY: 'k-0123456789' }, configFile: path });
};

describe('provider types', () => {
  it('lists each type once, with an adapter of that type for each', () => {
    expect(PROVIDER_TYPES).toEqual(['replicate', 'fal', 'openai', 'krea']);
    expect(new Set(PROVIDER_TYPES).size).toBe(PROVIDER_TYPES.length);
    expect(Object.keys(ADAPTERS).sort()).toEqual([...PROVIDER_TYPES].sort());
    const http = { json: () => Promise.reject(new Error('no calls')), send: () => Promise.reject(new Error('no calls')) };
    for (const type of PROVIDER_TYPES) {
      const [settings] = load({ p: { type, api_key_env: 'KEY' } }).providers;
      expect(ADAPTERS[type](settings!, http).type).toBe(type);
    }
    expect(providerTypeOf('midjourney')).toBeUndefined();
    expect(providerTypeOf('toString')).toBeUndefined();
  });

  it("a provider block gets its type's default base URL, normalised by the type's rule, and only its type's own keys", () => {
    for (const t of PROVIDER_TYPE_LIST) {
      const [p] = load({ p: { type: t.name, api_key_env: 'KEY' } }).providers;
      expect(p!.baseUrl).toBe(t.baseUrl(t.defaultBaseUrl));
      for (const [key, { setting, default: url }] of Object.entries(t.extraUrls)) expect((p as unknown as Record<string, unknown>)[setting], key).toBe(url);
    }
    expect(() => load({ p: { type: 'replicate', api_key_env: 'KEY', storage_url: 'https://x.example' } })).toThrow('providers.p.storage_url is a setting of fal providers only');
    expect(load({ p: { type: 'fal', api_key_env: 'KEY', storage_url: 'https://x.example/' } }).providers[0]!.storageUrl).toBe('https://x.example');
  });

  it('one base URL rule per type: a versioned OpenAI-compatible path is kept as it is, not given a second version', () => {
    const [gateway, local, fal] = load({
      gateway: { type: 'openai', api_key_env: 'KEY', base_url: 'https://gateway.example/openai/v2' },
      local: { type: 'openai', api_key_env: 'KEY', base_url: 'http://localai:8080/' },
      fal: { type: 'fal', api_key_env: 'KEY', base_url: 'https://fal.run/' },
    }).providers;
    expect(gateway!.baseUrl).toBe('https://gateway.example/openai/v2');
    expect(local!.baseUrl).toBe('http://localai:8080/v1');
    expect(fal!.baseUrl).toBe('https://queue.fal.run');
  });

  it("sends the key with the type's auth scheme", async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const type of PROVIDER_TYPES) {
        await createProviderHttp({ type, baseUrl, apiKey: () => 'sekrit', timeoutMs: 5000, clock: systemClock }).json('GET', '/x');
      }
      expect(seen).toEqual(PROVIDER_TYPES.map((t: ProviderType) => `${providerType(t).authScheme} sekrit`));
      expect(seen[1]).toBe('Key sekrit');
    } finally {
      server.close();
    }
  });

  it('says which types deduplicate a submission by idempotency key and which need upstream.model', () => {
    expect(PROVIDER_TYPE_LIST.filter((t) => t.deduplicates).map((t) => t.name)).toEqual(['krea']);
    expect(PROVIDER_TYPE_LIST.filter((t) => !t.needsUpstreamModel).map((t) => t.name)).toEqual(['krea']);
  });
});
