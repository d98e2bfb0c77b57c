import { invalid } from '../domain/error-catalogue.js';
import type { Services } from '../services/services.js';

/** Parsed admin flags by flag name: strings, booleans, and lists for repeatable flags. */
export type Flags = Record<string, string | boolean | string[] | undefined>;

/** What a command prints: with --json, and as text. */
export interface Output {
  readonly json: unknown;
  readonly text: string;
}

/** One option of one command. */
export interface OptionSpec {
  /** The long flag without its dashes: `workspace` for `--workspace`. */
  readonly flag: string;
  /** The value's placeholder (`W`); absent for a switch. */
  readonly arg?: string;
  readonly help: string;
  /** Refused before the store is opened when absent or empty. */
  readonly required?: boolean;
  /** May be given more than once; the values arrive as a list. */
  readonly repeatable?: boolean;
}

/**
 * One `mediagen admin` command: its words, the options it alone accepts (besides the store
 * options and --json every command takes), and the use case it translates to.
 */
export interface AdminCommand {
  /** `token create`: a noun, then a verb. */
  readonly name: string;
  readonly summary: string;
  /** Who may run it, shown in the help: `(owners and admins)`. */
  readonly who?: string;
  readonly options: readonly OptionSpec[];
  /** The one kind of command allowed to make a store where there is none (`workspace create`). */
  readonly createsStore?: boolean;
  readonly run: (s: Services, f: Flags) => Promise<Output>;
}

export const WORKSPACE: OptionSpec = { flag: 'workspace', arg: 'W', help: 'the workspace, by id or name', required: true };
export const AS: OptionSpec = { flag: 'as', arg: 'EMAIL', help: 'the email of the member acting', required: true };

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

/** A repeatable flag's values ([] when absent). */
export function list(f: Flags, name: string): string[] {
  const v = f[name];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw invalid(`--${name} takes a value`);
  return v;
}

export { formatMicrosOrNull as iso } from '../lib/time.js';
