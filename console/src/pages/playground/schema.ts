/**
 * A model's request JSON Schema (draft-07, as GET /models gives it) read as the fields of a form
 * (body.ts turns the form's values back into a request body). Pure: no DOM and no Preact, so the
 * unit tests run it in Node (test/console/playground-logic.test.ts).
 *
 * What the form shows for each schema shape:
 *   enum                              a select (multi-checkboxes for an array of enums)
 *   number/integer, min and max       a range slider with a number field on the same value
 *   other numbers                     a number field
 *   boolean                           a checkbox
 *   string                            a text input; a textarea for prompts and long strings;
 *                                     a URL field with a file upload for a media URL
 *   array of strings or numbers       rows to add and remove
 *   array of objects with properties  rows, each with the item's fields (one level deep)
 *   object with properties            its fields, grouped (one level deep)
 *   anything else                     a JSON text area
 * A nullable field (`anyOf: [X, {type: null}]`) is shown as X; left empty it is not sent.
 */

type Schema = Readonly<Record<string, unknown>>;

export type MediaAccept = 'image' | 'video' | 'audio' | 'any';
export type EnumValue = string | number | boolean;

interface FieldBase {
  /** The property's name in the body. */
  readonly name: string;
  readonly label: string;
  readonly description?: string | undefined;
  readonly required: boolean;
  /** The schema admits null: empty means "not sent" (the server reads absent and null alike). */
  readonly nullable: boolean;
  readonly default?: unknown;
}

export type Field =
  | (FieldBase & { readonly kind: 'enum'; readonly options: readonly EnumValue[] })
  | (FieldBase & {
      readonly kind: 'number';
      readonly integer: boolean;
      readonly min?: number | undefined;
      readonly max?: number | undefined;
      /** `min` (`max`) is excluded: the schema's exclusiveMinimum (exclusiveMaximum). */
      readonly exclusiveMin?: boolean;
      readonly exclusiveMax?: boolean;
      /** Minimum and maximum both given, over a range a slider can cover. */
      readonly slider: boolean;
      /** The slider's step (the number field takes any number; the API says what it refuses). */
      readonly step: number;
    })
  | (FieldBase & { readonly kind: 'boolean' })
  | (FieldBase & {
      readonly kind: 'string';
      readonly multiline: boolean;
      /** A URL of media: the form offers an upload beside the URL. */
      readonly media?: MediaAccept | undefined;
      readonly minLength?: number | undefined;
      readonly maxLength?: number | undefined;
    })
  | (FieldBase & { readonly kind: 'list'; readonly item: ScalarField; readonly minItems?: number | undefined; readonly maxItems?: number | undefined })
  | (FieldBase & { readonly kind: 'multi'; readonly options: readonly EnumValue[]; readonly maxItems?: number | undefined })
  | (FieldBase & { readonly kind: 'rows'; readonly fields: readonly Field[]; readonly minItems?: number | undefined; readonly maxItems?: number | undefined })
  | (FieldBase & { readonly kind: 'group'; readonly fields: readonly Field[] })
  | (FieldBase & { readonly kind: 'json'; readonly shape: 'object' | 'array' | 'any' });

/** A field one value of a list can be. */
export type ScalarField = Extract<Field, { kind: 'string' | 'number' }>;

/**
 * What the form holds for each field: enum the option (undefined: none chosen), number the text
 * typed, boolean a flag, string the text, list its rows' texts, multi the options ticked, rows one
 * set of values per row, group its fields' values, json the text.
 */
export type Value = EnumValue | undefined | readonly string[] | readonly EnumValue[] | readonly Values[] | Values;
export interface Values {
  readonly [name: string]: Value;
}

export const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

const WORDS: Record<string, string> = { url: 'URL', urls: 'URLs', id: 'ID', fps: 'FPS', lora: 'LoRA', cgi: 'CGI' };

/** `image_style_references` as "Image style references", `image_url` as "Image URL". */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((w) => WORDS[w.toLowerCase()] ?? w.toLowerCase());
  const text = words.join(' ');
  return text ? text.charAt(0).toUpperCase() + text.slice(1) : name;
}

/** The schema without a null branch, and whether there was one: `anyOf: [X, {type: 'null'}]` is X, nullable. */
function unwrapNullable(schema: Schema): { schema: Schema; nullable: boolean } {
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches) {
    const isNull = (b: unknown) => isObject(b) && b.type === 'null';
    const rest = branches.filter((b) => !isNull(b));
    if (rest.length === 1 && rest.length < branches.length && isObject(rest[0])) {
      const { anyOf: _a, oneOf: _o, ...outer } = schema;
      return { schema: { ...rest[0], ...outer }, nullable: true };
    }
  }
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const types = schema.type.filter((t) => t !== 'null');
    return { schema: { ...schema, type: types.length === 1 ? types[0] : types }, nullable: true };
  }
  return { schema, nullable: false };
}

const URL_FORMATS = new Set(['uri', 'url', 'iri', 'uri-reference', 'media-url']);
const MEDIA_NAME = /(^|_)(image|images|video|audio|frame)(_url)?$|_url$|^url$|^urls$/i;

/** Whether a string field takes the URL of a media file, and of which kind (for the upload's `accept`). */
export function mediaOf(name: string, schema: Schema): MediaAccept | undefined {
  const format = str(schema.format);
  if (!(format && URL_FORMATS.has(format)) && !MEDIA_NAME.test(name)) return undefined;
  const text = `${name} ${str(schema.description) ?? ''}`.toLowerCase();
  if (/video/.test(text)) return 'video';
  if (/audio|sound/.test(text)) return 'audio';
  if (/image|img|frame|photo|picture/.test(text)) return 'image';
  return 'any';
}

/** A slider is of use over a range a person can drag across: not a seed's 0 to 4294967295. */
const SLIDER_SPAN = 1_000_000;

function fieldOf(name: string, raw: Schema, required: boolean, depth: number): Field {
  const { schema, nullable } = unwrapNullable(raw);
  const base: FieldBase = {
    name,
    label: humanize(name),
    description: str(schema.description) ?? str(raw.description),
    required,
    nullable,
    ...(schema.default !== undefined ? { default: schema.default } : {}),
  };
  if (Array.isArray(schema.enum)) {
    const options = schema.enum.filter((v): v is EnumValue => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean');
    return { ...base, kind: 'enum', nullable: nullable || schema.enum.includes(null), options };
  }
  const type = schema.type;
  if (type === 'number' || type === 'integer') {
    const integer = type === 'integer';
    const min = num(schema.minimum) ?? num(schema.exclusiveMinimum);
    const max = num(schema.maximum) ?? num(schema.exclusiveMaximum);
    const slider = min !== undefined && max !== undefined && max > min && max - min <= SLIDER_SPAN;
    const span = slider ? max! - min! : 0;
    const step = integer || span > 20 ? 1 : span > 2 ? 0.1 : 0.01;
    const exclusive = {
      ...(num(schema.minimum) === undefined && min !== undefined ? { exclusiveMin: true } : {}),
      ...(num(schema.maximum) === undefined && max !== undefined ? { exclusiveMax: true } : {}),
    };
    return { ...base, kind: 'number', integer, min, max, ...exclusive, slider, step };
  }
  if (type === 'boolean') return { ...base, kind: 'boolean' };
  if (type === 'string') {
    const media = mediaOf(name, schema);
    const maxLength = num(schema.maxLength);
    const multiline = !media && (/prompt|lyrics|caption/i.test(name) || (maxLength ?? 0) >= 500);
    return { ...base, kind: 'string', multiline, media, minLength: num(schema.minLength), maxLength };
  }
  if (type === 'array' && depth === 0 && isObject(schema.items)) {
    const { schema: items } = unwrapNullable(schema.items);
    const minItems = num(schema.minItems);
    const maxItems = num(schema.maxItems);
    if (Array.isArray(items.enum)) {
      const options = items.enum.filter((v): v is EnumValue => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean');
      return { ...base, kind: 'multi', options, maxItems };
    }
    if (items.type === 'string' || items.type === 'number' || items.type === 'integer') {
      // The rows' fields are named by the list: "Image URLs" rows are each an image URL.
      // (The item's description tells what media it takes; the list's own is the hint shown.)
      const item: ScalarField = { ...(fieldOf(name, items, true, 1) as ScalarField), description: undefined };
      return { ...base, kind: 'list', item, minItems, maxItems };
    }
    if (items.type === 'object' && isObject(items.properties) && Object.keys(items.properties).length > 0) {
      return { ...base, kind: 'rows', fields: fieldsOf(items, 1), minItems, maxItems };
    }
    return { ...base, kind: 'json', shape: 'array' };
  }
  if (type === 'object' && depth === 0 && isObject(schema.properties) && Object.keys(schema.properties).length > 0) {
    return { ...base, kind: 'group', fields: fieldsOf(schema, 1) };
  }
  return { ...base, kind: 'json', shape: type === 'object' ? 'object' : type === 'array' ? 'array' : 'any' };
}

/** The fields of an object schema, in the schema's order. */
export function fieldsOf(schema: Schema | undefined, depth = 0): Field[] {
  if (!schema || !isObject(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  return Object.entries(schema.properties).flatMap(([name, s]) => (isObject(s) ? [fieldOf(name, s, required.has(name), depth)] : []));
}

/** What a field shows before anyone touches it: its default, or empty. */
export function initialValue(field: Field): Value {
  const d = field.default;
  switch (field.kind) {
    case 'enum':
      if (field.options.some((o) => o === d)) return d as EnumValue;
      // A required choice of one is no choice: made already.
      return field.required && field.options.length === 1 && !field.nullable ? field.options[0] : undefined;
    case 'number':
      return typeof d === 'number' ? String(d) : '';
    case 'boolean':
      return d === true;
    case 'string':
      return typeof d === 'string' ? d : '';
    case 'list':
      // A list that must have an item starts with an empty row to fill (empty rows are not sent).
      return Array.isArray(d) ? d.map((v) => String(v)) : field.required || (field.minItems ?? 0) > 0 ? [''] : [];
    case 'multi':
      return Array.isArray(d) ? d.filter((v) => field.options.includes(v as EnumValue)) : [];
    case 'rows':
      return [];
    case 'group':
      return initialValues(field.fields);
    case 'json':
      return d === undefined ? '' : JSON.stringify(d, null, 2);
  }
}

export function initialValues(fields: readonly Field[]): Values {
  return Object.fromEntries(fields.map((f) => [f.name, initialValue(f)]));
}
