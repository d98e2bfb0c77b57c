import { parseArgs } from 'node:util';
import type { Model } from '../index.js';
import { help } from './context.js';
import type { ClientContext } from './context.js';
import { EXIT, UsageError } from './exit.js';
import { CONNECTION_OPTIONS } from './generate.js';
import { unknownModel } from './suggest.js';

export const MODELS_HELP = `Usage: mediagen models [list] [--json]
       mediagen models show MODEL [--json]

list (the default): the server's models, with path, kind, and whether each takes requests
(retired ones answer 410). show: one model: what it does, its price, the fields of its request
(type, default, allowed values; * marks a required one) and, where the server tells, the engines
that serve it. Needs no token.
`;

type Schema = Record<string, unknown>;
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const usd = (micros: number) => `${(micros / 1_000_000).toFixed(6)} USD`;

export async function modelsCommand(ctx: ClientContext, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv[0] === 'list' || argv[0] === 'show' ? argv : ['list', ...argv];
  const { values, positionals } = parseArgs({ args: rest, options: CONNECTION_OPTIONS, strict: true, allowPositionals: true });
  if (values.help) return help(ctx, MODELS_HELP);
  const client = ctx.client(values, false);
  if (sub === 'list') {
    if (positionals.length) throw new UsageError(`unknown models command '${positionals[0]}'; the commands are: list, show MODEL`);
    const models = await client.models.list();
    if (values.json) ctx.stdout.write(json(models));
    else for (const m of models) ctx.stdout.write(`${m.id.padEnd(44)}  ${m.kind.padEnd(5)}  ${m.available ? 'available' : 'retired'}\n`);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`mediagen models show takes one MODEL, got ${positionals.length}`);
  const id = positionals[0]!;
  let model: Model;
  try {
    model = await client.models.get(id);
  } catch (err) {
    throw await unknownModel(err, client, id, 'mediagen models show {}');
  }
  ctx.stdout.write(values.json ? json(model) : describeModel(model));
  return EXIT.ok;
}

/** One model as `models show` prints it. */
export function describeModel(model: Model): string {
  const lines = [`${model.id}  (${model.kind}, ${model.available ? 'available' : 'retired: answers 410'})`, `  ${model.description}`];
  lines.push(`  POST ${model.endpoint ?? `/generate/${model.id}`}`);
  const dep = model.deprecation;
  if (dep) lines.push(`Deprecated: from ${dep.sunset_date} it answers 410${dep.replacement ? `; use ${dep.replacement}` : ''} (${dep.migration_url})`);
  if (model.price) {
    lines.push(`Price: ${model.price.description}`);
    const rates = Object.entries(model.price.rates_micro_usd);
    const width = Math.max(...rates.map(([name]) => name.length));
    for (const [name, micros] of rates) lines.push(`  ${name.padEnd(width)}  ${usd(micros)}`);
  }
  const schema = model.request_schema as Schema | undefined;
  const props = (schema?.properties ?? {}) as Record<string, Schema>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  if (Object.keys(props).length) {
    lines.push('Fields (* required):');
    const rows = Object.entries(props).map(([name, s]) => [`${name}${required.has(name) ? '*' : ''}`, typeOf(s), s.description === undefined ? '' : String(s.description)] as const);
    const nameWidth = Math.max(...rows.map((r) => r[0].length));
    const typeWidth = Math.min(40, Math.max(...rows.map((r) => r[1].length)));
    for (const [name, type, about] of rows) lines.push(`  ${name.padEnd(nameWidth)}  ${type.padEnd(typeWidth)}  ${about}`.trimEnd());
  }
  // `engines`: which engines serve the model, where the server shows it (to owners and admins).
  const engines = (model as { engines?: unknown }).engines;
  if (engines !== undefined) lines.push(`Engines: ${engineList(engines).join(', ') || 'none'}`);
  return `${lines.join('\n')}\n`;
}

/** A field's JSON Schema in a few words: its type, allowed values, bounds and default. */
export function typeOf(s: Schema): string {
  const words: string[] = [];
  const variants = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (Array.isArray(s.enum)) words.push(`one of ${s.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('|')}`);
  else if (s.const !== undefined) words.push(`= ${JSON.stringify(s.const)}`);
  else if (Array.isArray(variants)) words.push(variants.map(typeOf).join(' or '));
  else if (s.type === 'array') {
    const items = s.items as Schema | undefined;
    words.push(items ? `array of ${typeOf(items)}` : 'array');
  } else if (s.type !== undefined) words.push(Array.isArray(s.type) ? s.type.join('|') : String(s.type));
  else words.push('any');
  if (typeof s.format === 'string') words.push(`(${s.format})`);
  const min = s.minimum ?? s.minLength ?? s.minItems;
  const max = s.maximum ?? s.maxLength ?? s.maxItems;
  if (min !== undefined || max !== undefined) words.push(`${min ?? ''}..${max ?? ''}`);
  if (s.default !== undefined) words.push(`default ${JSON.stringify(s.default)}`);
  return words.join(' ');
}

/** The `engines` of a model view in words, whatever its shape: names, or objects named by a key. */
function engineList(engines: unknown): string[] {
  const one = (e: unknown): string => {
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object') {
      const o = e as Record<string, unknown>;
      const name = o.name ?? o.id ?? o.engine ?? o.kind;
      const rest = Object.entries(o).filter(([k, v]) => v !== name && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') && k !== 'name' && k !== 'id');
      return `${String(name ?? JSON.stringify(o))}${rest.length ? ` (${rest.map(([k, v]) => `${k} ${String(v)}`).join(', ')})` : ''}`;
    }
    return JSON.stringify(e);
  };
  if (Array.isArray(engines)) return engines.map(one);
  if (engines && typeof engines === 'object') return Object.entries(engines).map(([k, v]) => `${k}: ${one(v)}`);
  return [one(engines)];
}
