import type { TObject } from '@sinclair/typebox';

/** Where a drawn seed comes from: a float in [0, 1), as Math.random (tests inject their own). */
export type RandomSource = () => number;

/** The widest seed the built-in models take (their `seed` fields' maximum): an unsigned 32-bit integer. */
const SEED_MAX = 4_294_967_295;

interface SeedRange {
  readonly min: number;
  readonly max: number;
}

/** The integer range a model's `seed` field accepts, or undefined when the schema has no numeric `seed`. */
function seedRange(schema: TObject | undefined): SeedRange | undefined {
  const field = (schema?.properties as Record<string, unknown> | undefined)?.seed as Record<string, unknown> | undefined;
  if (field === undefined) return undefined;
  // A nullable seed (`Nullable(Type.Number())`) is a union of the number and null.
  const branches = Array.isArray(field.anyOf) ? (field.anyOf as Record<string, unknown>[]) : [field];
  const numeric = branches.find((b) => b.type === 'integer' || b.type === 'number');
  // A seed of a few allowed values, or of a step, is the sender's to choose: none is drawn.
  if (numeric === undefined || numeric.enum !== undefined || numeric.const !== undefined || numeric.multipleOf !== undefined) return undefined;
  const num = (key: string) => (typeof numeric[key] === 'number' ? (numeric[key] as number) : undefined);
  const lowest = num('exclusiveMinimum') === undefined ? num('minimum') : Math.floor(num('exclusiveMinimum')!) + 1;
  const highest = num('exclusiveMaximum') === undefined ? num('maximum') : Math.ceil(num('exclusiveMaximum')!) - 1;
  const min = Math.max(Math.ceil(lowest ?? 0), 0);
  const max = Math.floor(highest === undefined ? SEED_MAX : Math.min(highest, Number.MAX_SAFE_INTEGER));
  return min <= max ? { min, max } : undefined;
}

/**
 * The body a job stores and runs: a request that leaves out the `seed` of a model that has one
 * (or sends null) gets a random seed, drawn within the field's range. It is stored with the job,
 * so GET /jobs/{id}/details shows it and the same request with that seed gives the same output
 * again; without it, the local engine would draw the same picture for every identical request.
 * One rule for every model, built-in or declared in the config file, whatever engine runs it.
 */
export function withRandomSeed(schema: TObject | undefined, body: Record<string, unknown>, random: RandomSource): Record<string, unknown> {
  if (body.seed !== undefined && body.seed !== null) return body;
  const range = seedRange(schema);
  if (range === undefined) return body;
  const seed = range.min + Math.floor(random() * (range.max - range.min + 1));
  return { ...body, seed: Math.min(seed, range.max) };
}
