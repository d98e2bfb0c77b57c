import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/app/runtime.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { REMOTE_PREFIX } from '../../src/engines/bindings.js';
import { JOB_ERROR_CODES } from '../../src/engines/engine.js';
import { sandboxFailure } from '../../src/engines/sandbox-engine.js';
import { DomainError } from '../../src/domain/error-catalogue.js';
import {
  SANDBOX_FAIL_CODES,
  SANDBOX_MAX_DELAY_MS,
  SANDBOX_OTHER_CODES,
  checkSandboxMarkers,
  readSandboxMarkers,
  sandboxMarkersOf,
} from '../../src/domain/sandbox-markers.js';
import { MODELS } from '../../src/models/registry.js';
import { serverUnavailableError } from '../../src/services/jobs/job-runs.js';
import { clientJobError } from '../../src/worker/job-errors.js';

/** The 400 message `readSandboxMarkers` refuses `prompt` with. */
function refusal(prompt: string): string {
  try {
    readSandboxMarkers(prompt);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).code).toBe('invalid_request');
    return (err as DomainError).message;
  }
  throw new Error(`${prompt} was accepted`);
}

describe('sandbox markers', () => {
  it.each([
    ['a fox [mediagen:fail=engine_failed]', 'a fox', { fail: 'engine_failed' }],
    ['a fox[mediagen:timeout]', 'a fox', { timeout: true }],
    ['a fox [mediagen:delay=5000]  ', 'a fox', { delayMs: 5000 }],
    ['a fox [mediagen:delay=0]', 'a fox', { delayMs: 0 }],
    [`a fox [mediagen:delay=${SANDBOX_MAX_DELAY_MS}]`, 'a fox', { delayMs: SANDBOX_MAX_DELAY_MS }],
    ['a fox [mediagen:delay=250][mediagen:fail=input_invalid]', 'a fox', { delayMs: 250, fail: 'input_invalid' }],
    ['a fox [mediagen:timeout] [mediagen:delay=10]', 'a fox', { timeout: true, delayMs: 10 }],
    ['[mediagen:fail=worker_lost]', '', { fail: 'worker_lost' }],
  ])('reads %j as the prompt %j with %j', (prompt, rest, markers) => {
    expect(readSandboxMarkers(prompt)).toEqual({ prompt: rest, markers });
  });

  it.each(['a fox', 'a [mediagen:fail=engine_failed] fox', '[mediagen:timeout] first', 'a fox [MEDIAGEN:timeout]', 'a fox [mediagen:timeout] .', ''])(
    'reads no marker in %j: only markers at the very end count',
    (prompt) => {
      expect(readSandboxMarkers(prompt)).toEqual({ prompt, markers: {} });
      expect(sandboxMarkersOf({ prompt })).toBeUndefined();
    },
  );

  it('refuses an unknown fail code, naming every code it takes', () => {
    expect(refusal('a fox [mediagen:fail=card_declined]')).toBe(
      "'prompt' ends with [mediagen:fail=card_declined]: [mediagen:fail=<code>] takes one of input_fetch_failed, input_invalid, input_too_large, engine_failed, worker_lost, server_unavailable, upstream_rejected, upstream_failed, upstream_unavailable, upstream_malformed",
    );
    expect(refusal('a fox [mediagen:fail]')).toMatch(/takes one of input_fetch_failed/);
    expect(refusal('a fox [mediagen:fail=timeout]')).toBe("'prompt' ends with [mediagen:fail=timeout]: use [mediagen:timeout], which times the job out through the real timeout");
  });

  it.each([
    ['a fox [mediagen:delay=60001]', "'prompt' ends with [mediagen:delay=60001]: the delay must be a whole number of milliseconds from 0 to 60000"],
    ['a fox [mediagen:delay=-1]', 'from 0 to 60000'],
    ['a fox [mediagen:delay=1.5]', 'from 0 to 60000'],
    ['a fox [mediagen:delay=5s]', 'from 0 to 60000'],
    ['a fox [mediagen:delay]', 'from 0 to 60000'],
    ['a fox [mediagen:timeout=3000]', '[mediagen:timeout] takes no value'],
    ['a fox [mediagen:explode]', "'prompt' ends with an unknown sandbox marker [mediagen:explode]; the markers are [mediagen:fail=<code>], [mediagen:timeout] and [mediagen:delay=<ms>] (docs/sandbox.md)"],
    ['a fox [mediagen:toString]', 'unknown sandbox marker [mediagen:toString]'],
    ['a fox [mediagen:delay=1] [mediagen:delay=2]', "'prompt' has the sandbox marker [mediagen:delay] more than once"],
    ['a fox [mediagen:fail=engine_failed][mediagen:timeout]', "'prompt' has both [mediagen:fail=engine_failed] and [mediagen:timeout]; a job fails one way, send one of them"],
  ])('refuses %j', (prompt, message) => {
    expect(refusal(prompt)).toContain(message);
  });

  it('checks only a string prompt of a body; a stored prompt that does not read is ordinary text to the run', () => {
    expect(() => checkSandboxMarkers({ image_url: 'https://example.com/a.png [mediagen:explode]' })).not.toThrow();
    expect(() => checkSandboxMarkers({ prompt: 'a [mediagen:explode]' })).toThrow(DomainError);
    expect(sandboxMarkersOf({ prompt: 'a [mediagen:explode]' })).toBeUndefined();
    expect(sandboxMarkersOf({ inputs: {}, graph: {} })).toBeUndefined();
    expect(sandboxMarkersOf({ prompt: 'a [mediagen:timeout]' })).toEqual({ prompt: 'a', markers: { timeout: true } });
  });

  it('decides every job error code: fail= takes it, or says what to use instead', () => {
    const decided = [...SANDBOX_FAIL_CODES, ...Object.keys(SANDBOX_OTHER_CODES)].sort();
    expect(decided).toEqual(Object.keys(JOB_ERROR_CODES).sort());
  });

  it('fails with the error a client sees of a real failure of the same code', () => {
    const request = { prompt: 'a fox', image_url: 'https://cdn.example.org/in.png' };
    const seen = (code: (typeof SANDBOX_FAIL_CODES)[number]) => clientJobError(sandboxFailure(code, request));
    expect(seen('engine_failed')).toEqual({ code: 'engine_failed', message: 'the engine failed unexpectedly' });
    expect(seen('server_unavailable')).toEqual(serverUnavailableError({ kind: 'disk_full', code: 'ENOSPC' }));
    expect(seen('worker_lost')).toEqual({ code: 'worker_lost', message: "the job's worker stopped 3 times; giving up" });
    expect(seen('input_fetch_failed')).toEqual({ code: 'input_fetch_failed', message: 'image_url: HTTP 404 from cdn.example.org' });
    expect(seen('input_invalid')).toEqual({ code: 'input_invalid', message: 'image_url is not a usable image: it cannot be decoded' });
    expect(seen('input_too_large')).toEqual({ code: 'input_too_large', message: 'image_url is 10000 x 10000 pixels; at most 50,000,000 pixels are accepted' });
    // The server log says it was the sandbox.
    expect(sandboxFailure('engine_failed', request).detail).toBe('sandbox: the prompt asked for [mediagen:fail=engine_failed]');
    // A model whose request has no URL field: the message names image_url.
    expect(clientJobError(sandboxFailure('input_fetch_failed', { prompt: 'x' }))).toEqual({ code: 'input_fetch_failed', message: 'image_url: HTTP 404 from example.com' });
  });
});

describe('docs/sandbox.md', () => {
  const doc = readFileSync(new URL('../../docs/sandbox.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');

  it('names every model with a prompt, and every code fail= takes with the message it shows', () => {
    const withPrompt = MODELS.filter((m) => m.request && 'prompt' in ((m.request as { properties?: object }).properties ?? {}));
    expect(withPrompt.length).toBeGreaterThan(5);
    for (const m of withPrompt) expect(doc).toContain(`\`${m.path}\``);
    for (const code of SANDBOX_FAIL_CODES) {
      const { message } = clientJobError(sandboxFailure(code, { prompt: 'x', image_url: 'https://cdn.example.org/in.png' }));
      expect(doc).toContain(`| \`${code}\` |`);
      expect(doc).toContain(`\`${message}\``);
    }
  });
});

describe('--sandbox in the config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediagen-sandbox-config-'));
  const file = (content: unknown) => {
    const path = join(dir, `${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const PREFIX = '--sandbox (MEDIAGEN_SANDBOX) is refused with production settings: ';

  it('is off by default, and on by the flag, the environment or the file', () => {
    expect(loadConfig({ env: {} }).sandbox).toBe(false);
    expect(loadConfig({ env: {}, flags: { sandbox: true } }).sandbox).toBe(true);
    expect(loadConfig({ env: { MEDIAGEN_SANDBOX: '1' } }).sandbox).toBe(true);
    expect(loadConfig({ env: {}, configFile: file({ sandbox: true }) }).sandbox).toBe(true);
    expect(loadConfig({ env: { MEDIAGEN_SANDBOX: 'yes' }, flags: { sandbox: false } }).sandbox).toBe(false);
  });

  it.each([
    ['NODE_ENV=production', { env: { NODE_ENV: 'production' }, flags: { sandbox: true } }, 'NODE_ENV is production'],
    ['a PostgreSQL database_url', { env: { MEDIAGEN_SANDBOX: 'true', MEDIAGEN_DATABASE_URL: 'postgres://u@db:5432/x' } }, 'a PostgreSQL database_url is set (a shared, scaled-out deployment)'],
    [
      'a model bound to a remote pool',
      { env: {}, flags: { sandbox: true }, configFile: file({ model_engines: { 'image/vendor-b/model-b-1': 'remote:gpu-a' } }) },
      'model image/vendor-b/model-b-1 is bound to a remote pool (remote:gpu-a)',
    ],
  ])('is refused with %s', (_what, opts, why) => {
    const load = () => loadConfig(opts as Parameters<typeof loadConfig>[0]);
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(`${PREFIX}${why}; the sandbox makes jobs fail on purpose and is for development and integration servers only (docs/sandbox.md)`);
  });

  it('leaves those settings alone without --sandbox, and allows NODE_ENV=development or test', () => {
    expect(loadConfig({ env: { NODE_ENV: 'production', MEDIAGEN_DATABASE_URL: 'postgres://u@db:5432/x' } }).sandbox).toBe(false);
    expect(loadConfig({ env: { NODE_ENV: 'development' }, flags: { sandbox: true } }).sandbox).toBe(true);
    expect(loadConfig({ env: { NODE_ENV: 'test' }, flags: { sandbox: true } }).sandbox).toBe(true);
  });

  it("refuses at the runtime a remote binding the config loader did not see, with the loader's rule", async () => {
    expect(REMOTE_PREFIX).toBe('remote:');
    // A config built by hand (as a test or the bench does) skips the loader: the bindings still count.
    const config = { ...loadConfig({ env: {} }), dataDir: dir, sandbox: true, modelEngines: { 'image/vendor-b/model-b-1': 'remote:gpu-a' } };
    await expect(createRuntime(config)).rejects.toThrow(`${PREFIX}model image/vendor-b/model-b-1 is bound to a remote pool (remote:gpu-a)`);
  });
});
