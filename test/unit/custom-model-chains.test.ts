import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { wireModels } from '../../src/app/engine-set.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import type { Config } from '../../src/config/config.js';
import type { EngineChainSpec } from '../../src/config/routing-settings.js';

/**
 * A custom model's own `engine` takes what a `model_engines` value takes (docs/config.md, "Custom
 * models"; docs/routing.md): one engine id, a fallback chain, or a chain with spillover, read by
 * the same reader with the same refusals, and bound as its chain unless `model_engines` binds it.
 */

const MODEL = 'image/acme/chained-v1';
const WHERE = `models[0] (${MODEL}).engine`;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const decl = (engine: unknown) => ({
  path: MODEL,
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', maxLength: 100, description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.01' },
  engine,
  upstream: { model: 'fal-ai/flux/dev', input: { prompt: '{{prompt}}' } },
});
const fal = { type: 'fal', api_key_env: 'FAL_KEY' };

function configWith(file: object): Config {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-chains-'));
  dirs.push(dir);
  const path = join(dir, 'mediagen.json');
  writeFileSync(path, JSON.stringify({ providers: { a: fal, b: fal }, ...file }));
  return loadConfig({ env: { FAL_KEY: 'k' }, configFile: path });
}
const withEngine = (engine: unknown, more: object = {}) => configWith({ models: [decl(engine)], ...more });

describe("a custom model's engine: the shapes of a model_engines value", () => {
  it.each<[string, unknown, EngineChainSpec]>([
    ['one engine id', 'provider:a', { engines: ['provider:a'] }],
    ['a fallback chain', ['provider:a', 'provider:b'], { engines: ['provider:a', 'provider:b'] }],
    ['a chain with spillover', { engines: ['remote:gpus', 'provider:a'], spill_after_ms: 20_000 }, { engines: ['remote:gpus', 'provider:a'], spillAfterMs: 20_000 }],
  ])('reads %s as model_engines reads it, and binds the model to that chain', (_name, engine, chain) => {
    const own = withEngine(engine);
    expect(own.models[0]!.engine).toEqual(chain);
    // The same value in model_engines reads to the same chain: one reader.
    expect(configWith({ models: [decl('provider:a')], model_engines: { [MODEL]: engine } }).engineChains[MODEL]).toEqual(chain);
    const { bindings } = wireModels(own);
    expect(bindings.chain(MODEL)).toEqual({ engines: chain.engines, spillAfterMs: chain.spillAfterMs });
    expect(bindings.origin(MODEL)).toBeUndefined();
  });

  it('binds a remote-first chain as model_engines would: the pool first, spilling after spill_after_ms', () => {
    const { bindings } = wireModels(withEngine({ engines: ['remote:gpus', 'provider:a'], spill_after_ms: 1000 }));
    expect(bindings.of(MODEL)).toEqual({ kind: 'remote', pool: 'gpus' });
    expect([...bindings.remote]).toEqual([[MODEL, 'gpus']]);
    expect([...bindings.spill]).toEqual([[MODEL, 1000]]);
  });

  it('gives way to a model_engines key that binds the model, by its path or a pattern', () => {
    const chained = ['provider:a', 'provider:b'];
    expect(wireModels(withEngine(chained, { model_engines: { [MODEL]: 'provider:b' } })).bindings.chain(MODEL)?.engines).toEqual(['provider:b']);
    const byPattern = wireModels(withEngine(chained, { model_engines: { 'image/acme/*': ['provider:b', 'provider:a'] } })).bindings;
    expect(byPattern.chain(MODEL)?.engines).toEqual(['provider:b', 'provider:a']);
    expect(byPattern.origin(MODEL)).toBe("model_engines 'image/acme/*'");
  });
});

describe("a custom model's engine: refusals, each naming models[i].engine", () => {
  it.each([
    ['an empty id', '', `mediagen.json: ${WHERE} must be an engine id such as "local", "comfyui:gpu", "provider:fal" or a remote pool such as "remote:gpu"`],
    ['a number', 7, `${WHERE} must be an engine id, a list of 1 to 8 engine ids (a fallback chain, e.g. ["comfyui:gpu", "provider:fal"]) or {"engines": [...], "spill_after_ms": 20000}`],
    ['an empty list', [], `${WHERE} must be an engine id, a list of 1 to 8 engine ids`],
    ['a list of nine', Array.from({ length: 9 }, (_, i) => `provider:p${i}`), `${WHERE} must be an engine id, a list of 1 to 8 engine ids`],
    ['a list with a non-id', ['provider:a', 3], `${WHERE}[1] must be an engine id such as`],
    ['an engine named twice', ['provider:a', 'provider:a'], `${WHERE} names provider:a twice; a chain tries each engine once`],
    ['an unknown key', { engines: ['provider:a', 'provider:b'], spill: 5 }, `${WHERE}: unknown key 'spill'; the keys are engines, spill_after_ms`],
    ['an object without engines', { spill_after_ms: 5 }, `${WHERE} must be an engine id, a list of 1 to 8 engine ids`],
    ['an object with a non-id', { engines: ['provider:a', ''] }, `${WHERE}.engines[1] must be an engine id such as`],
    ['a negative spill', { engines: ['remote:gpus', 'provider:a'], spill_after_ms: -1 }, `${WHERE}.spill_after_ms must be a whole number from 0 to 86400000, got -1`],
    ['a spill of a fraction', { engines: ['remote:gpus', 'provider:a'], spill_after_ms: 1.5 }, `${WHERE}.spill_after_ms must be a whole number from 0 to 86400000, got 1.5`],
    ['a spill with nowhere to go', { engines: ['remote:gpus'], spill_after_ms: 100 }, `${WHERE}.spill_after_ms needs a second engine to spill to`],
  ])('refuses %s, as model_engines does', (_name, engine, message) => {
    expect(() => withEngine(engine)).toThrow(ConfigError);
    expect(() => withEngine(engine)).toThrow(message);
    // The same value in model_engines: the same sentence, naming model_engines instead.
    const tail = message.slice(message.indexOf(WHERE) + WHERE.length);
    expect(() => configWith({ models: [decl('provider:a')], model_engines: { [MODEL]: engine } })).toThrow(`model_engines.${MODEL}${tail}`);
  });

  it.each([
    ['local first', ['local', 'provider:a'], `${WHERE}: 'local' is the built-in engine, which renders only the built-in models`],
    ['local later', ['provider:a', 'local'], `${WHERE}: 'local' is the built-in engine, which renders only the built-in models`],
    ['a remote pool not first', { engines: ['provider:a', 'remote:gpus'], spill_after_ms: 10 }, `${WHERE}: remote:gpus is not first in its chain; a pool of remote workers can only be a chain's first engine`],
    ['a remote-first chain without spill_after_ms', ['remote:gpus', 'provider:a'], `${WHERE}: a chain that starts with a remote pool moves on only by spillover; give it "spill_after_ms"`],
    ['a malformed pool later', ['provider:a', 'remote:GPU'], `${WHERE}[1]: 'remote:GPU' names no pool`],
    ['an undeclared provider later', ['provider:a', 'provider:nope'], `model ${MODEL} is bound to provider:nope, which providers does not declare; providers: a, b`],
  ])('refuses a chain with %s when the models are bound', (_name, engine, message) => {
    const config = withEngine(engine);
    expect(() => wireModels(config)).toThrow(ConfigError);
    expect(() => wireModels(config)).toThrow(message);
  });
});
