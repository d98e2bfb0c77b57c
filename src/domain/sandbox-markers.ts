import { invalid } from './error-catalogue.js';

/**
 * The sandbox's magic inputs (docs/sandbox.md): markers at the end of a request's `prompt` that make
 * a job fail, time out or take longer on purpose, as Stripe's test cards make a payment fail. Pure
 * rules: the API checks them when a job is created (`checkSandboxMarkers`), the worker's sandbox
 * engine and run policy act on them (`sandboxMarkersOf`). Without `--sandbox` nobody reads them.
 */

/**
 * The job error codes `[mediagen:fail=<code>]` takes: every code of JOB_ERROR_CODES
 * (src/engines/engine.ts) but `timeout`, which has a marker of its own that goes through the run's
 * real timeout. A test checks that every job error code is here or in SANDBOX_OTHER_CODES.
 */
export const SANDBOX_FAIL_CODES = [
  'input_fetch_failed',
  'input_invalid',
  'input_too_large',
  'engine_failed',
  'worker_lost',
  'server_unavailable',
  'upstream_rejected',
  'upstream_failed',
  'upstream_unavailable',
  'upstream_malformed',
] as const;
export type SandboxFailCode = (typeof SANDBOX_FAIL_CODES)[number];

/** Job error codes `fail=` refuses, each with where to go instead. */
export const SANDBOX_OTHER_CODES: Readonly<Record<string, string>> = Object.freeze({ timeout: 'use [mediagen:timeout], which times the job out through the real timeout' });

/** The longest `[mediagen:delay=<ms>]`. */
export const SANDBOX_MAX_DELAY_MS = 60_000;
/** The timeout of a job sent with `[mediagen:timeout]` (its model's, if that is shorter). */
export const SANDBOX_TIMEOUT_MS = 5_000;
/** How long each non-terminal status lasts at least in sandbox mode: seen by a client polling once a second. */
export const SANDBOX_DWELL_MS = 1_100;

/** What a prompt's markers ask for. */
export interface SandboxMarkers {
  readonly fail?: SandboxFailCode;
  readonly timeout?: true;
  readonly delayMs?: number;
}

export interface MarkedPrompt {
  /** The prompt without its markers (and the white space before them): what the engine renders. */
  readonly prompt: string;
  readonly markers: SandboxMarkers;
}

/** One marker at the very end of the text: `[mediagen:name]` or `[mediagen:name=value]`. */
const LAST_MARKER = /\s*\[mediagen:([^\]=]*)(?:=([^\]]*))?\]\s*$/;
const KEYS: ReadonlyMap<string, keyof SandboxMarkers> = new Map([
  ['fail', 'fail'],
  ['timeout', 'timeout'],
  ['delay', 'delayMs'],
]);
const MARKERS_HELP = 'the markers are [mediagen:fail=<code>], [mediagen:timeout] and [mediagen:delay=<ms>] (docs/sandbox.md)';

/**
 * Reads the markers at the end of `prompt`: any number of them, each at most once, separated by
 * white space or nothing. A marker anywhere else is ordinary text. Throws `invalid_request` (400)
 * naming what is wrong: an unknown marker, a code `fail` does not take (the message lists those it
 * does), a delay that is not a whole number of milliseconds up to 60000, a marker given twice, or
 * `fail` with `timeout`.
 */
export function readSandboxMarkers(prompt: string): MarkedPrompt {
  let rest = prompt;
  const found: { fail?: SandboxFailCode; timeout?: true; delayMs?: number } = {};
  for (let m = LAST_MARKER.exec(rest); m; m = LAST_MARKER.exec(rest)) {
    const [whole, name = '', value] = m;
    rest = rest.slice(0, rest.length - whole.length);
    const shown = `[mediagen:${name}${value === undefined ? '' : `=${value}`}]`;
    const key = KEYS.get(name);
    if (key && Object.hasOwn(found, key)) throw invalid(`'prompt' has the sandbox marker [mediagen:${name}] more than once`);
    if (name === 'fail') found.fail = failCode(value, shown);
    else if (name === 'timeout') {
      if (value !== undefined) throw invalid(`'prompt' ends with ${shown}: [mediagen:timeout] takes no value`);
      found.timeout = true;
    } else if (name === 'delay') found.delayMs = delayOf(value, shown);
    else throw invalid(`'prompt' ends with an unknown sandbox marker ${shown}; ${MARKERS_HELP}`);
  }
  if (found.fail && found.timeout) throw invalid(`'prompt' has both [mediagen:fail=${found.fail}] and [mediagen:timeout]; a job fails one way, send one of them`);
  return { prompt: rest, markers: found };
}

function failCode(value: string | undefined, shown: string): SandboxFailCode {
  const code = SANDBOX_FAIL_CODES.find((c) => c === value);
  if (code) return code;
  const instead = value !== undefined ? SANDBOX_OTHER_CODES[value] : undefined;
  const valid = `[mediagen:fail=<code>] takes one of ${SANDBOX_FAIL_CODES.join(', ')}`;
  throw invalid(`'prompt' ends with ${shown}: ${instead ?? valid}`);
}

function delayOf(value: string | undefined, shown: string): number {
  const ms = value !== undefined && /^\d{1,6}$/.test(value) ? Number(value) : NaN;
  if (!(ms <= SANDBOX_MAX_DELAY_MS)) throw invalid(`'prompt' ends with ${shown}: the delay must be a whole number of milliseconds from 0 to ${SANDBOX_MAX_DELAY_MS}`);
  return ms;
}

/** Checks a new job's body (the 400 at creation in sandbox mode): the markers of its `prompt`, if it has one. */
export function checkSandboxMarkers(body: Readonly<Record<string, unknown>>): void {
  if (typeof body.prompt === 'string') readSandboxMarkers(body.prompt);
}

/**
 * A stored request's markers and the prompt its engine renders, for the run; undefined when the
 * request has no `prompt` string (a node-app job's plan, a model without one) or no markers. A
 * prompt whose markers do not read (a job created before the server ran with `--sandbox`) is
 * ordinary text, as outside the sandbox.
 */
export function sandboxMarkersOf(request: Readonly<Record<string, unknown>>): MarkedPrompt | undefined {
  if (typeof request.prompt !== 'string') return undefined;
  try {
    const read = readSandboxMarkers(request.prompt);
    return Object.keys(read.markers).length > 0 ? read : undefined;
  } catch {
    return undefined;
  }
}
