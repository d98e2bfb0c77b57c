import { invalid } from '../domain/errors.js';
import type { Services } from '../services/services.js';

/** Parsed admin flags: strings, booleans, and lists for repeatable flags. */
export type Flags = Record<string, string | boolean | string[] | undefined>;

/** One admin command: what it prints with --json, and as text. */
export type Command = (s: Services, f: Flags) => Promise<{ json: unknown; text: string }>;

export function need(f: Flags, name: string): string {
  const v = f[name];
  if (typeof v !== 'string' || v === '') throw invalid(`--${name} is required`);
  return v;
}

export function optional(f: Flags, name: string): string | undefined {
  const v = f[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw invalid(`--${name} takes a value`);
  return v;
}

export function wholeNumber(f: Flags, name: string): number | undefined {
  const v = f[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) throw invalid(`--${name} must be a whole number`);
  return Number(v);
}

export { formatMicrosOrNull as iso } from '../lib/time.js';
