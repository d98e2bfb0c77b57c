import { describe, expect, it } from 'vitest';
import { readCommandSettings } from '../../src/config/command-settings.js';
import { ConfigError } from '../../src/config/readers.js';

describe('commands in the config file', () => {
  it('reads a command with its defaults; cwd is relative to the config file', () => {
    const [sdxl, other] = readCommandSettings(
      { sdxl: { argv: ['python3', 'serve.py'], cwd: 'examples/diffusers', env: { MODEL_PATH: '/models/sdxl' }, processes: 2 }, other: { argv: ['./serve'] } },
      '/etc/mediagen/mediagen.json',
      '/etc/mediagen',
    );
    expect(sdxl).toEqual({
      name: 'sdxl',
      argv: ['python3', 'serve.py'],
      cwd: '/etc/mediagen/examples/diffusers',
      env: { MODEL_PATH: '/models/sdxl' },
      processes: 2,
      cancelGraceMs: 10_000,
      startTimeoutMs: 600_000,
    });
    expect(other).toMatchObject({ cwd: '/etc/mediagen', env: {}, processes: 1 });
    expect(readCommandSettings({ a: { argv: ['x'], cwd: '/srv/a', cancel_grace_ms: 500, start_timeout_ms: 5000 } }, 'f', '/etc')[0]).toMatchObject({ cwd: '/srv/a', cancelGraceMs: 500, startTimeoutMs: 5000 });
  });

  const refusals: [string, unknown, RegExp][] = [
    ['not an object', [], /commands must be an object/],
    ['a bad name', { 'Big Name': { argv: ['x'] } }, /'Big Name' is not a command name/],
    ['no argv', { a: {} }, /commands\.a\.argv must be a non-empty array/],
    ['an empty argv', { a: { argv: [] } }, /commands\.a\.argv/],
    ['an argv of numbers', { a: { argv: ['python3', 3] } }, /commands\.a\.argv/],
    ['an unknown key', { a: { argv: ['x'], shell: true } }, /commands\.a: unknown key 'shell'/],
    ['0 processes', { a: { argv: ['x'], processes: 0 } }, /commands\.a\.processes must be an integer from 1 to 64/],
    ['65 processes', { a: { argv: ['x'], processes: 65 } }, /commands\.a\.processes/],
    ['an env value that is a number', { a: { argv: ['x'], env: { CUDA_VISIBLE_DEVICES: 0 } } }, /commands\.a\.env\.CUDA_VISIBLE_DEVICES must be a string/],
    ['an env name that is none', { a: { argv: ['x'], env: { 'A-B': '1' } } }, /commands\.a\.env: 'A-B' is not a variable name/],
    ['an empty cwd', { a: { argv: ['x'], cwd: '' } }, /commands\.a\.cwd/],
    ['a short grace', { a: { argv: ['x'], cancel_grace_ms: 5 } }, /commands\.a\.cancel_grace_ms/],
  ];
  for (const [what, raw, message] of refusals) {
    it(`refuses ${what}, naming the key`, () => {
      expect(() => readCommandSettings(raw, 'mediagen.json', '/etc')).toThrow(ConfigError);
      expect(() => readCommandSettings(raw, 'mediagen.json', '/etc')).toThrow(message);
    });
  }
});
