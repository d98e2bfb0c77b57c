import { parseUsd } from '../domain/money.js';
import type { MicroUsd } from '../domain/money.js';

/**
 * What the config's readers share: the error every refusal of a setting is, and the readers of
 * values more than one section of the config file takes (config.ts re-exports ConfigError).
 */

/** A setting that stops the start; its message names the setting as the user wrote it. */
export class ConfigError extends Error {}

/** A USD amount as the config file gives it: a decimal string (or number) with at most 6 places, in micro-USD. */
export function readUsd(raw: unknown, where: string): MicroUsd {
  const micros = typeof raw === 'string' || typeof raw === 'number' ? parseUsd(String(raw)) : undefined;
  if (micros === undefined) {
    throw new ConfigError(`${where} must be a USD amount such as "0.035" (at most 6 decimal places), got ${JSON.stringify(raw)}`);
  }
  return micros;
}

/**
 * A URL-ish setting as an error may quote it: JSON, at most 200 characters, with anything up to its
 * last `@` after the scheme (user:password, however mangled) replaced by `***`, so no config error
 * ever echoes a credential back.
 */
export function shownUrl(raw: unknown): string {
  if (typeof raw !== 'string') return JSON.stringify(raw) ?? String(raw);
  return JSON.stringify(raw.replace(/^([a-z][a-z0-9+.-]*:\/*)?.*@/is, (_all, scheme: string | undefined) => `${scheme ?? ''}***@`).slice(0, 200));
}

/**
 * A server URL a command line was given (`from` names the flag or variable): absolute http(s) and
 * without credentials, which belong in the token (`tokenHint`: where to give it). Query and
 * fragment are left to the caller, which refuses or drops them.
 */
export function serverUrlOf(raw: string, from: string, tokenHint: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${from} must be an absolute http(s) URL such as http://localhost:8080, got ${shownUrl(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${from} must be an http(s) URL, got '${url.protocol}'`);
  if (url.username || url.password) throw new ConfigError(`${from} must not carry credentials; ${tokenHint}`);
  return url;
}

/** The first of `names` set to a non-empty value in `env`. */
export const firstEnv = (names: readonly string[], env: Readonly<Record<string, string | undefined>>): string | undefined =>
  names.map((name) => env[name]).find((v) => v !== undefined && v !== '');
