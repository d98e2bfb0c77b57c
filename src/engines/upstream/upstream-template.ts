import { isPlainObject } from '../../lib/plain-object.js';

/**
 * The two halves of mapping a model onto a provider (docs/providers.md, "Templates"): the request
 * into the provider's input (`upstream.input`), and the provider's answer back into files
 * (`upstream.outputs`). Pure functions over JSON.
 */

const WHOLE = /^\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}$/;
const INNER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;
/** Marks a value left out of the input: a whole `"{{field}}"` whose field the request does not have. */
const ABSENT = Symbol('absent');

/** A request field by name; a dotted name reads into objects (`size.width`). */
function lookup(request: Readonly<Record<string, unknown>>, name: string): unknown {
  let value: unknown = request;
  for (const part of name.split('.')) {
    if (!isPlainObject(value) || !Object.hasOwn(value, part)) return undefined;
    value = value[part];
  }
  return value;
}

function fill(template: unknown, request: Readonly<Record<string, unknown>>): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    // Exactly "{{field}}": the request's value with its type kept (a number stays a number), or left out.
    if (whole) {
      const value = lookup(request, whole[1]!);
      return value === undefined ? ABSENT : structuredClone(value);
    }
    // Inside a longer string: the value's text; a missing field reads as nothing.
    return template.replace(INNER, (_m, name: string) => {
      const value = lookup(request, name);
      if (value === undefined || value === null) return '';
      return typeof value === 'string' ? value : JSON.stringify(value);
    });
  }
  if (Array.isArray(template)) return template.map((t) => fill(t, request)).filter((v) => v !== ABSENT);
  if (isPlainObject(template)) {
    const out: Record<string, unknown> = {};
    for (const [key, t] of Object.entries(template)) {
      const value = fill(t, request);
      if (value !== ABSENT) out[key] = value;
    }
    return out;
  }
  return template;
}

/**
 * The provider input for `request`: the template with each `"{{field}}"` replaced by the field's
 * value (type kept; the key left out when the request has none), `{{field}}` inside longer strings
 * by its text, everything else copied. Without a template, the request as it is.
 */
export function fillTemplate(template: unknown, request: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if (template === undefined) return structuredClone({ ...request });
  const out = fill(template, request);
  return isPlainObject(out) ? out : {};
}

type Step = { readonly key: string; readonly index: readonly ('*' | number)[] };

function parse(path: string): Step[] {
  return path.split('.').map((segment) => {
    const key = segment.replace(/\[.*$/, '');
    const index = [...segment.matchAll(/\[(\*|\d+)\]/g)].map((m) => (m[1] === '*' ? '*' : Number(m[1])));
    return { key, index };
  });
}

function collect(value: unknown, steps: readonly Step[], out: unknown[]): void {
  if (steps.length === 0) {
    // A path that ends on an array of strings (Replicate's `output`) gives each of them.
    if (Array.isArray(value)) value.forEach((v) => out.push(v));
    else out.push(value);
    return;
  }
  const [step, ...rest] = steps;
  if (!isPlainObject(value) || !Object.hasOwn(value, step!.key)) return;
  let values: unknown[] = [value[step!.key]];
  for (const i of step!.index) {
    values = values.flatMap((v) => (!Array.isArray(v) ? [] : i === '*' ? v : i < v.length ? [v[i]] : []));
  }
  for (const v of values) collect(v, rest, out);
}

/**
 * The strings an answer holds at `paths` (`images[*].url`, `video.url`, `output`, `data[*].b64_json`),
 * in path order: each path that is present gives its values, absent ones give none, so a list of
 * paths covers answers of several shapes. Values that are not non-empty strings are dropped.
 */
export function readOutputPaths(answer: unknown, paths: readonly string[]): string[] {
  const out: unknown[] = [];
  for (const path of paths) collect(answer, parse(path), out);
  return out.filter((v): v is string => typeof v === 'string' && v !== '');
}

/** `value` with every string equal to `from` replaced by `to`, at any depth. */
export function replaceString(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((v) => replaceString(v, from, to));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceString(v, from, to)]));
  return value;
}

/** Whether `value` holds the string `s` anywhere. */
export function containsString(value: unknown, s: string): boolean {
  if (value === s) return true;
  if (Array.isArray(value)) return value.some((v) => containsString(v, s));
  if (isPlainObject(value)) return Object.values(value).some((v) => containsString(v, s));
  return false;
}

/** At most this many files are taken from one answer. */
export const MAX_UPSTREAM_OUTPUTS = 16;
