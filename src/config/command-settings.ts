import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from './readers.js';
import { isPlainObject } from '../lib/plain-object.js';

/**
 * The config file's `commands` (docs/engines.md, "Command engine"): each a long-running process
 * that serves models over JSON lines, bound to as `command:<name>`. Read and checked here, with
 * nothing started: the engine spawns the processes.
 */

export interface CommandSettings {
  /** Its key in `commands`: models bind to it as `command:<name>`. */
  readonly name: string;
  /** The program and its arguments, run without a shell. */
  readonly argv: readonly string[];
  /** Absolute: as written, or relative to the config file's directory (the default). */
  readonly cwd: string;
  /** Set in the process's environment on top of the few variables it inherits. */
  readonly env: Readonly<Record<string, string>>;
  /** How many processes run side by side, each one job at a time. */
  readonly processes: number;
  /** How long a process may take to stop a job it was sent `cancel` for before it is killed. */
  readonly cancelGraceMs: number;
  /** How long a process may take from its start to its `ready` line before it is killed and restarted. */
  readonly startTimeoutMs: number;
}

const NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const ENV_RE = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const KEYS = ['argv', 'cwd', 'env', 'processes', 'cancel_grace_ms', 'start_timeout_ms'];
const INTS = {
  processes: { min: 1, max: 64, default: 1 },
  cancel_grace_ms: { min: 100, max: 600_000, default: 10_000 },
  start_timeout_ms: { min: 1000, max: 3_600_000, default: 600_000 },
} as const;
const MAX_ARGS = 256;
const MAX_ARG_LENGTH = 4096;
const MAX_ENV_VALUE = 32_768;

function readArgv(raw: unknown, where: string): string[] {
  const ok = Array.isArray(raw) && raw.length > 0 && raw.length <= MAX_ARGS && raw.every((a) => typeof a === 'string' && a.length <= MAX_ARG_LENGTH && !a.includes('\0'));
  if (!ok || raw[0] === '') throw new ConfigError(`${where}.argv must be a non-empty array of strings, the program first, such as ["python3", "serve.py"]`);
  return [...(raw as string[])];
}

function readEnv(raw: unknown, where: string): Record<string, string> {
  if (raw === undefined) return {};
  if (!isPlainObject(raw)) throw new ConfigError(`${where}.env must be an object of variable name to string value, such as {"MODEL_PATH": "/models/sdxl"}`);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!ENV_RE.test(key)) throw new ConfigError(`${where}.env: '${key.slice(0, 80)}' is not a variable name`);
    if (typeof value !== 'string' || value.length > MAX_ENV_VALUE || value.includes('\0')) throw new ConfigError(`${where}.env.${key} must be a string`);
    env[key] = value;
  }
  return env;
}

function readCommand(name: string, raw: unknown, file: string, configDir: string): CommandSettings {
  const where = `${file}: commands.${name}`;
  if (!NAME_RE.test(name)) throw new ConfigError(`${file}: commands: '${name.slice(0, 80)}' is not a command name; a name is 1 to 63 of a-z, 0-9, _ and -`);
  if (!isPlainObject(raw)) throw new ConfigError(`${where} must be an object such as {"argv": ["python3", "serve.py"], "processes": 1}`);
  const extra = Object.keys(raw).find((k) => !KEYS.includes(k));
  if (extra !== undefined) throw new ConfigError(`${where}: unknown key '${extra}'; the keys are ${KEYS.join(', ')}`);
  const argv = readArgv(raw.argv, where);
  if (raw.cwd !== undefined && (typeof raw.cwd !== 'string' || raw.cwd === '' || raw.cwd.includes('\0'))) {
    throw new ConfigError(`${where}.cwd must be a directory path, absolute or relative to the config file's directory`);
  }
  const cwd = raw.cwd === undefined ? resolve(configDir) : isAbsolute(raw.cwd as string) ? resolve(raw.cwd as string) : resolve(configDir, raw.cwd as string);
  const ints = Object.fromEntries(
    Object.entries(INTS).map(([k, spec]) => {
      const v = raw[k] ?? spec.default;
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < spec.min || v > spec.max) throw new ConfigError(`${where}.${k} must be an integer from ${spec.min} to ${spec.max}, got ${JSON.stringify(v)}`);
      return [k, v];
    }),
  ) as Record<keyof typeof INTS, number>;
  return Object.freeze({
    name,
    argv: Object.freeze(argv),
    cwd,
    env: Object.freeze(readEnv(raw.env, where)),
    processes: ints.processes,
    cancelGraceMs: ints.cancel_grace_ms,
    startTimeoutMs: ints.start_timeout_ms,
  });
}

/** `commands`: name -> command block. `configDir` is the directory of `file`, which relative `cwd`s start from. */
export function readCommandSettings(raw: unknown, file: string, configDir: string): CommandSettings[] {
  if (!isPlainObject(raw)) throw new ConfigError(`${file}: commands must be an object of command name to {"argv", "cwd", "env", "processes"}`);
  return Object.entries(raw).map(([name, block]) => readCommand(name, block, file, configDir));
}
