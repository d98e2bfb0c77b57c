/**
 * The playground form's values turned back into a request body (schema.ts reads the schema into
 * fields): only what is set or required is sent, never an empty string; numbers and JSON that do
 * not parse are local errors. `looksValid` tells whether the API would likely take the body, so the
 * page asks for a price only then. Pure, like schema.ts.
 */
import { initialValue, isObject } from './schema.js';
import type { Field, Value, Values } from './schema.js';

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A local mistake the API never sees: a number or JSON that does not parse. Keyed by field path. */
export type LocalErrors = Record<string, string>;

type Built = { set: true; value: unknown } | { set: false };
const unset: Built = { set: false };

function numberOf(text: string, field: Extract<Field, { kind: 'number' }>, path: string, errors: LocalErrors): Built {
  const t = text.trim();
  if (t === '') return unset;
  const n = Number(t);
  if (!Number.isFinite(n)) {
    errors[path] = `${field.label} must be a number`;
    return unset;
  }
  return { set: true, value: n };
}

function build(field: Field, value: Value, path: string, errors: LocalErrors): Built {
  switch (field.kind) {
    case 'enum':
      return value === undefined || value === '' ? unset : { set: true, value };
    case 'number':
      return numberOf(typeof value === 'string' ? value : '', field, path, errors);
    case 'boolean':
      return { set: true, value: value === true };
    case 'string':
      // Never an empty string: an empty optional field is left out, and an empty required one too,
      // so that the API names it as missing.
      return typeof value === 'string' && value !== '' ? { set: true, value } : unset;
    case 'list': {
      const rows = (Array.isArray(value) ? (value as string[]) : []).filter((r) => typeof r === 'string' && r.trim() !== '');
      const out: unknown[] = [];
      rows.forEach((r, i) => {
        const b = field.item.kind === 'number' ? numberOf(r, field.item, `${path}[${i}]`, errors) : { set: true as const, value: r };
        if (b.set) out.push(b.value);
      });
      return out.length > 0 ? { set: true, value: out } : unset;
    }
    case 'multi':
      return Array.isArray(value) && value.length > 0 ? { set: true, value: [...value] } : unset;
    case 'rows': {
      const rows = Array.isArray(value) ? (value as Values[]) : [];
      if (rows.length === 0) return unset;
      return { set: true, value: rows.map((row, i) => objectOf(field.fields, row, `${path}[${i}]`, errors)) };
    }
    case 'group': {
      const obj = objectOf(field.fields, (value ?? {}) as Values, path, errors);
      return Object.keys(obj).length > 0 ? { set: true, value: obj } : unset;
    }
    case 'json': {
      const text = typeof value === 'string' ? value.trim() : '';
      if (text === '') return unset;
      try {
        const parsed: unknown = JSON.parse(text);
        if (field.shape === 'object' && !isObject(parsed)) throw new Error('give a JSON object, such as {"key": "value"}');
        if (field.shape === 'array' && !Array.isArray(parsed)) throw new Error('give a JSON array, such as [{"key": "value"}]');
        return { set: true, value: parsed };
      } catch (err) {
        errors[path] = `${field.label}: ${err instanceof SyntaxError ? 'not valid JSON' : (err as Error).message}`;
        return unset;
      }
    }
  }
}

function objectOf(fields: readonly Field[], values: Values, prefix: string, errors: LocalErrors): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const value = values[f.name];
    // Sent: what is required, and what differs from what the form started with (the schema's
    // default, which the server applies anyway, or nothing).
    if (!f.required && same(value, initialValue(f))) continue;
    const b = build(f, value, prefix ? `${prefix}.${f.name}` : f.name, errors);
    if (b.set) out[f.name] = b.value;
  }
  return out;
}

/**
 * The request body of the form's values: the fields that are required or that the person set,
 * never an empty string; `errors` holds what could not be read (a number or JSON that does not
 * parse), by field path.
 */
export function bodyOf(fields: readonly Field[], values: Values): { body: Record<string, unknown>; errors: LocalErrors } {
  const errors: LocalErrors = {};
  const body = objectOf(fields, values, '', errors);
  return { body, errors };
}

/** Whether one built value keeps to its field's plain bounds (the ones a form can see). */
function fits(field: Field, value: unknown): boolean {
  switch (field.kind) {
    case 'number': {
      if (typeof value !== 'number') return false;
      if (field.integer && !Number.isInteger(value)) return false;
      if (field.min !== undefined && (field.exclusiveMin ? value <= field.min : value < field.min)) return false;
      return !(field.max !== undefined && (field.exclusiveMax ? value >= field.max : value > field.max));
    }
    case 'string':
      return typeof value === 'string' && value.length >= (field.minLength ?? 0) && value.length <= (field.maxLength ?? Infinity);
    case 'list':
      return Array.isArray(value) && value.length >= (field.minItems ?? 0) && value.length <= (field.maxItems ?? Infinity) && value.every((v) => fits(field.item, v));
    case 'multi':
      return Array.isArray(value) && value.length <= (field.maxItems ?? Infinity);
    case 'rows':
      return (
        Array.isArray(value) &&
        value.length >= (field.minItems ?? 0) &&
        value.length <= (field.maxItems ?? Infinity) &&
        value.every((row) => isObject(row) && looksValid(field.fields, row))
      );
    case 'group':
      return isObject(value) && looksValid(field.fields, value);
    default:
      return true;
  }
}

/**
 * Whether a body looks valid as far as the form can tell: its required fields there, its numbers,
 * lengths and counts within their bounds. Only to decide whether a price quote is worth asking
 * for (a body that fails these would be refused): the submit always goes to the API, which judges.
 */
export function looksValid(fields: readonly Field[], body: Readonly<Record<string, unknown>>): boolean {
  return fields.every((f) => (f.name in body ? fits(f, body[f.name]) : !f.required));
}
