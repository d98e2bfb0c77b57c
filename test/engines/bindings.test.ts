import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.js';
import { readCustomModels } from '../../src/config/custom-model-settings.js';
import { buildBindings } from '../../src/engines/bindings.js';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { EngineRouter } from '../../src/engines/router.js';
import { matchesGlob } from '../../src/lib/glob.js';
import { modelsWith } from '../../src/models/custom-models.js';
import { MODELS } from '../../src/models/registry.js';
import { CUSTOM_MODELS, GRADIENT, MORPH, TONE } from '../helpers/custom-models.js';

const A2 = 'image/vendor-a/model-a-2/medium';
const B1 = 'image/vendor-b/model-b-1';
const D_FAST = 'video/vendor-d/model-d-fast';
const C_EDIT = 'video/vendor-c/model-c-edit';
const TAKING = MODELS.filter((m) => m.engine !== undefined).map((m) => m.path);
const VIDEOS = TAKING.filter((p) => p.startsWith('video/'));
const ALL = modelsWith(readCustomModels(CUSTOM_MODELS, 'c.json'));

class NamedEngine implements BindableEngine {
  constructor(
    readonly name: string,
    readonly models: readonly string[],
  ) {}
  canRun(model: string): boolean {
    return this.models.includes(model);
  }
  run(_job: EngineJob, _ctx: EngineContext): Promise<OutputFile[]> {
    return Promise.resolve([]);
  }
}

describe('model path patterns', () => {
  it('* matches any run of characters, / included; everything else matches itself', () => {
    expect(matchesGlob('video/*', D_FAST)).toBe(true);
    expect(matchesGlob('video/*', 'video/')).toBe(true);
    expect(matchesGlob('video/*', 'image/video/x')).toBe(false);
    expect(matchesGlob('*', 'loraTraining')).toBe(true);
    expect(matchesGlob('image/*/model-a-2/*', A2)).toBe(true);
    expect(matchesGlob('*-fast', D_FAST)).toBe(true);
    expect(matchesGlob('image/vendor.a/*', A2)).toBe(false);
  });

  it('? matches one character in model_engines too: the dialect of worker tokens and claims', () => {
    const b = buildBindings(MODELS, { 'video/vendor-?/model-d-fast': 'remote:gpu-q' });
    expect(b.of(D_FAST)).toEqual({ kind: 'remote', pool: 'gpu-q' });
    expect(b.origin(D_FAST)).toBe("model_engines 'video/vendor-?/model-d-fast'");
    // A run of stars is no slower than one.
    expect(buildBindings(MODELS, { [`${'*'.repeat(100)}-d-fast`]: 'remote:gpu-s' }).of(D_FAST)).toEqual({ kind: 'remote', pool: 'gpu-s' });
  });
});

describe('engine bindings', () => {
  it('without model_engines, binds every model to its module\'s engine: every built-in on local, custom ones on their pools', () => {
    const b = buildBindings(ALL);
    for (const path of TAKING) expect(b.of(path), path).toEqual({ kind: 'engine', engine: 'local' });
    expect(b.of(GRADIENT)).toEqual({ kind: 'remote', pool: 'python' });
    expect([...b.remote]).toEqual([
      [GRADIENT, 'python'],
      [TONE, 'python'],
      [MORPH, 'gpu'],
    ]);
    expect(b.of('node-app/my-app')).toBeUndefined();
    expect(b.of('image/vendor-g/model-g-3')).toBeUndefined();
  });

  it('binds by pattern; a path beats every pattern and the longest pattern beats shorter ones', () => {
    const b = buildBindings(ALL, { 'video/*': 'remote:gpu-a', 'video/vendor-d/*': 'remote:gpu-b', [C_EDIT]: 'local', '*': 'remote:any' });
    expect(b.of(D_FAST)).toEqual({ kind: 'remote', pool: 'gpu-b' });
    expect(b.of(C_EDIT)).toEqual({ kind: 'engine', engine: 'local' });
    expect(b.of('video/vendor-e/model-e-1')).toEqual({ kind: 'remote', pool: 'gpu-a' });
    expect(b.of(MORPH)).toEqual({ kind: 'remote', pool: 'gpu-a' });
    expect(b.of(A2)).toEqual({ kind: 'remote', pool: 'any' });
    expect(b.of(GRADIENT)).toEqual({ kind: 'remote', pool: 'any' });
    expect(b.origin(D_FAST)).toBe("model_engines 'video/vendor-d/*'");
    expect(b.origin(C_EDIT)).toBe('model_engines');
    expect(b.remote.has(C_EDIT)).toBe(false);
    expect(b.remote.get(D_FAST)).toBe('gpu-b');
  });

  it('refuses two equally specific patterns that bind one model differently, unless the model has its own entry', () => {
    const build = (extra: Record<string, string> = {}) => buildBindings(MODELS, { 'video/v*': 'remote:a', '*-d-fast': 'remote:b', ...extra });
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(`model_engines: 'video/v*' and '*-d-fast' both match ${D_FAST}, equally specifically, and bind it differently; add an entry for ${D_FAST} itself`);
    expect(build({ [D_FAST]: 'remote:c' }).of(D_FAST)).toEqual({ kind: 'remote', pool: 'c' });
    // Binding it the same way is no conflict.
    expect(buildBindings(MODELS, { 'video/v*': 'remote:a', '*-d-fast': 'remote:a' }).of(D_FAST)).toEqual({ kind: 'remote', pool: 'a' });
  });

  it('refuses a pattern that matches no model that takes requests, naming it', () => {
    expect(() => buildBindings(MODELS, { 'text/*': 'remote:gpu' })).toThrow("model_engines: pattern 'text/*' matches no model that takes requests; the models are image/vendor-a/model-a-2/medium");
    // Retired models take no requests: a pattern matching only those matches nothing.
    expect(() => buildBindings(MODELS, { 'video/vendor-i/*': 'remote:gpu' })).toThrow("pattern 'video/vendor-i/*' matches no model");
    expect(() => buildBindings(MODELS, { 'video/ *': 'remote:gpu' })).toThrow("model_engines: 'video/ *' is not a pattern");
  });

  it('refuses a malformed pool wherever it is named', () => {
    expect(() => buildBindings(MODELS, { 'video/*': 'remote:GPU' })).toThrow("model_engines.video/*: 'remote:GPU' names no pool");
  });

  it("parses an instance of any kind, naming no kind itself, and refuses a malformed instance name by its kind's name", () => {
    // Whether the kind exists is the engine set's check against engines/kinds.ts (test/engines/engine-kinds.test.ts).
    expect(buildBindings(MODELS, { [B1]: 'newkind:box-1' }).of(B1)).toEqual({ kind: 'engine', engine: 'newkind:box-1' });
    expect(() => buildBindings(MODELS, { [B1]: 'comfyui:GPU' })).toThrow(`model_engines.${B1}: 'comfyui:GPU' names no comfyui; a name is 1 to 63 of a-z, 0-9, _ and -, e.g. comfyui:main`);
    expect(() => buildBindings(MODELS, { [B1]: 'newkind:' })).toThrow(`model_engines.${B1}: 'newkind:' names no newkind`);
  });
});

describe('the engine router asks the bindings', () => {
  it('leaves every model bound to a pool out, by pattern too, and runs the rest on their engines', () => {
    const local = new NamedEngine('local', TAKING);
    const router = EngineRouter.build(ALL, [local], buildBindings(ALL, { 'video/*': 'remote:gpu' }));
    for (const path of VIDEOS) expect(router.engineFor(path), path).toBeUndefined();
    expect(router.engineFor(A2)).toBe(local);
    expect(router.engineFor(GRADIENT)).toBeUndefined();
  });

  it('still refuses an engine id this server does not have, saying which pattern named it', () => {
    const engines = [new NamedEngine('local', TAKING)];
    expect(() => EngineRouter.build(MODELS, engines, buildBindings(MODELS, { 'image/vendor-b/*': 'gpu' }))).toThrow(
      `model ${B1} is bound to engine 'gpu' (model_engines 'image/vendor-b/*'), which this server does not have; engines: local`,
    );
    expect(() => EngineRouter.build(MODELS, [new NamedEngine('local', [A2])], buildBindings(MODELS, { 'image/*': 'local' }))).toThrow(
      /^model image\/vendor-a\/model-a-2\/large is bound to engine 'local' \(model_engines 'image\/\*'\), which cannot run it$/,
    );
  });
});
