import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildEngineSet, wireModels } from '../../src/app/engine-set.js';
import { loadConfig } from '../../src/config/config.js';
import type { Config } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/readers.js';
import type { BindableEngine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import type { EngineKind, KindWiring } from '../../src/engines/engine-kind.js';
import { ENGINE_KINDS, kindOf } from '../../src/engines/kinds.js';
import { UpstreamNudges } from '../../src/engines/providers/upstream-nudges.js';
import { systemClock } from '../../src/lib/clock.js';
import type { Log } from '../../src/lib/log.js';

const B1 = 'image/vendor-b/model-b-1';
const A2 = 'image/vendor-a/model-a-2/medium';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function configWith(file: object, env: Record<string, string> = {}): Config {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-kinds-'));
  dirs.push(dir);
  const path = join(dir, 'mediagen.json');
  writeFileSync(path, JSON.stringify(file));
  return loadConfig({ env, configFile: path });
}

function recordingLog(lines: { msg: string; engine?: string }[]): Log {
  const put = (obj: object, msg: string) => void lines.push({ msg, ...(obj as { engine?: string }) });
  return { info: put, warn: put, error: put };
}

/** An engine of the test's kind: runs the models bound to it, and records its life cycle. */
class EchoEngine implements BindableEngine {
  readonly events: string[] = [];
  constructor(
    readonly name: string,
    readonly models: ReadonlySet<string>,
    readonly warning?: string,
  ) {}
  canRun(model: string): boolean {
    return this.models.has(model);
  }
  run(job: EngineJob, _ctx: EngineContext): Promise<OutputFile[]> {
    return Promise.resolve([{ name: `${job.model.replaceAll('/', '_')}.png`, contentType: 'image/png' }]);
  }
  async check(): Promise<string | undefined> {
    this.events.push('check');
    return this.warning;
  }
  async close(): Promise<void> {
    this.events.push('close');
  }
}

/** A kind a test adds to the list: instances `echo:one` and `echo:two`, declared by the kind itself (a config section reader lives in config/). */
function echoKind(opts: { warning?: string; refuse?: string } = {}) {
  const checked: KindWiring[] = [];
  const built: EchoEngine[] = [];
  const kind: EngineKind = {
    name: 'echo',
    section: { key: 'echoes', names: () => ['one', 'two'] },
    check: (w) => {
      checked.push(w);
      for (const [path, b] of w.bound) if (opts.refuse === path) throw new ConfigError(`model ${path} is bound to ${b.engine}, which refuses it`);
    },
    build: async (w) => {
      const engines = ['one', 'two'].map((n) => new EchoEngine(`echo:${n}`, new Set([...w.bound].filter(([, b]) => b.engine === `echo:${n}`).map(([p]) => p)), opts.warning));
      built.push(...engines);
      return engines;
    },
    describe: (state) => ({ status: typeof state.s === 'string' ? state.s : null, usage: null, final: state.s === 'done' }),
  };
  return { kind, checked, built };
}

describe('engine kinds, declared once', () => {
  it('a kind added to the one list is bound, checked, built, started and closed like the others', async () => {
    const echo = echoKind({ warning: 'echo:one is slow to wake' });
    const lines: { msg: string; engine?: string }[] = [];
    const config = configWith({ model_engines: { [B1]: 'echo:one', [A2]: 'echo:two' } });
    const wiring = wireModels(config, [...ENGINE_KINDS, echo.kind]);
    expect(echo.checked[0]!.bound).toEqual(
      new Map([
        [B1, { engine: 'echo:one', upstream: undefined }],
        [A2, { engine: 'echo:two', upstream: undefined }],
      ]),
    );
    const set = await buildEngineSet(config, wiring, { clock: systemClock, nudges: new UpstreamNudges(), log: recordingLog(lines) });
    expect(set.router.engineFor(B1)?.name).toBe('echo:one');
    expect(set.router.engineFor(A2)?.name).toBe('echo:two');
    const ran = await set.router.run({ id: 'j', model: B1, request: {} }, {} as EngineContext);
    expect(ran[0]!.name).toBe('image_vendor-b_model-b-1.png');
    // Every engine's start-up check ran once; its warning is logged under the engine's name.
    expect(echo.built.map((e) => e.events)).toEqual([['check'], ['check']]);
    expect(lines.filter((l) => l.msg === 'echo:one is slow to wake').map((l) => l.engine)).toEqual(['echo:one', 'echo:two']);
    await set.close();
    await set.close();
    expect(echo.built.map((e) => e.events)).toEqual([
      ['check', 'close'],
      ['check', 'close'],
    ]);
    // The kind reads its own engines' stored state for a job's details.
    expect(kindOf('echo:one', [...ENGINE_KINDS, echo.kind])?.describe?.({ s: 'done' })).toEqual({ status: 'done', usage: null, final: true });
  });

  it("refuses at start, in every role, a model bound to an instance its kind's section does not declare, or to no kind at all", () => {
    const echo = echoKind();
    expect(() => wireModels(configWith({ model_engines: { [B1]: 'echo:three' } }), [...ENGINE_KINDS, echo.kind])).toThrow(
      `model ${B1} is bound to echo:three (model_engines), which echoes does not declare; echoes: one, two`,
    );
    // Without the kind in the list, `echo:` names nothing this server has.
    expect(() => wireModels(configWith({ model_engines: { [B1]: 'echo:one' } }))).toThrow(
      `model ${B1} is bound to echo:one (model_engines), which names no kind of engine this server has; engines are local, provider:<name>, comfyui:<name>, command:<name>, or remote:<pool>`,
    );
    expect(() => wireModels(configWith({ model_engines: { [B1]: 'echo:one' } }), [...ENGINE_KINDS, echoKind({ refuse: B1 }).kind])).toThrow(`model ${B1} is bound to echo:one, which refuses it`);
  });

  it('a model bound to an instance of a kind may carry an upstream block, as a provider-bound one does', () => {
    const echo = echoKind();
    const wiring = wireModels(configWith({ model_engines: { [B1]: 'echo:one' }, upstream: { [B1]: { input: { text: '{{prompt}}' } } } }), [...ENGINE_KINDS, echo.kind]);
    expect(echo.checked[0]!.bound.get(B1)).toEqual({ engine: 'echo:one', upstream: { input: { text: '{{prompt}}' } } });
    expect(wiring.named.get(B1)?.engine).toBe('echo:one');
  });

  it('the list names every kind of the config: each section it reads declares that kind\'s engines, and local is the one kind without a section', () => {
    const config = configWith({
      providers: { rep: { type: 'replicate', api_key_env: 'K' } },
      comfyui: { gpu: { base_url: 'http://127.0.0.1:1' } },
      commands: { sd: { argv: ['python3', '-c', 'pass'] } },
    }, { K: 'key-1' });
    expect(ENGINE_KINDS.map((k) => [k.name, k.section?.key ?? null, k.section?.names(config) ?? null])).toEqual([
      ['local', null, null],
      ['provider', 'providers', ['rep']],
      ['comfyui', 'comfyui', ['gpu']],
      ['command', 'commands', ['sd']],
    ]);
    expect(kindOf('comfyui:gpu')?.name).toBe('comfyui');
    expect(kindOf('local')?.name).toBe('local');
    // A kind with instances is named with one, and the one without none.
    expect(kindOf('comfyui')).toBeUndefined();
    expect(kindOf('local:x')).toBeUndefined();
    expect(kindOf('remote:gpu')).toBeUndefined();
  });
});

describe('engine life cycle', () => {
  it('a ComfyUI server that does not answer at start is a warning naming the engine, not a refusal', async () => {
    // A port nothing listens on: taken, then given back.
    const port = await new Promise<number>((done) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = srv.address() as { port: number };
        srv.close(() => done(p));
      });
    });
    const lines: { msg: string; engine?: string }[] = [];
    const config = configWith({
      comfyui: { gpu: { base_url: `http://127.0.0.1:${port}` } },
      models: [],
    });
    const set = await buildEngineSet(config, wireModels(config), { clock: systemClock, nudges: new UpstreamNudges(), log: recordingLog(lines) });
    try {
      expect(set.engines.map((e) => e.name)).toEqual(['local', 'comfyui:gpu']);
      const warned = lines.find((l) => l.engine === 'comfyui:gpu');
      expect(warned?.msg).toBe(`comfyui:gpu: http://127.0.0.1:${port} does not answer now (ECONNREFUSED); its jobs wait for it until their deadline`);
    } finally {
      await set.close();
    }
  });

  it('a check that refuses (a ConfigError) stops the start, and what was built is closed', async () => {
    const closed: string[] = [];
    const refusing: EngineKind = {
      name: 'strict',
      section: { key: 'stricts', names: () => ['a'] },
      build: async () => [
        Object.assign(new EchoEngine('strict:a', new Set()), {
          check: async () => Promise.reject(new ConfigError('strict:a: its model file is missing')),
          close: async () => void closed.push('strict:a'),
        }),
      ],
    };
    const config = configWith({});
    await expect(buildEngineSet(config, wireModels(config, [...ENGINE_KINDS, refusing]), { clock: systemClock, nudges: new UpstreamNudges() })).rejects.toThrow('strict:a: its model file is missing');
    expect(closed).toEqual(['strict:a']);
  });
});
