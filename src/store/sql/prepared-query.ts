import type { CompiledQuery, Kysely, QueryResult } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Stands in for a parameter while a statement is built once: `MARK` + `row:key` + NUL. NULs
 * enclose it: no constant our code writes into a query has one, and a stand-in is never sent
 * (every one is replaced before execution).
 */
const MARK = '\u0000mediagen-param:';

/** Variants kept per statement and dialect: shapes are few (a batch's length at most `create_batch_max`); past this, built per call. */
const MAX_VARIANTS = 256;

/** Where one parameter of the compiled text comes from: a constant of the build, an argument, or a row's field. */
type Slot = { readonly value: unknown } | { readonly key: string } | { readonly key: string; readonly row: number };

interface Compiled {
  readonly query: CompiledQuery;
  readonly slots: readonly Slot[];
}

/** What a build sees: stand-ins for the call's arguments and, for a batch statement, for its rows' fields. */
export interface Params<A, Row> {
  readonly args: A;
  row(i: number): Row;
}

function standIns<T>(prefix: string): T {
  return new Proxy(
    {},
    {
      get: (_, key) => (typeof key === 'string' ? `${MARK}${prefix}${key}\u0000` : undefined),
      // A spread or Object.keys of the stand-ins would see no fields and silently build a statement without them.
      ownKeys: () => {
        throw new Error('a prepared statement enumerated its stand-ins; name each field');
      },
    },
  ) as T;
}

function slotOf(value: unknown): Slot {
  if (typeof value !== 'string' || !value.includes(MARK)) return { value };
  const end = value.indexOf('\u0000', MARK.length);
  const colon = value.indexOf(':', MARK.length);
  // A stand-in changed on its way in (quoted, joined, stringified) would send the wrong value.
  if (!value.startsWith(MARK) || end !== value.length - 1 || colon < 0 || colon > end) {
    throw new Error('a prepared statement altered a parameter stand-in; pass the value itself');
  }
  const row = value.slice(MARK.length, colon);
  const key = value.slice(colon + 1, end);
  return row === '' ? { key } : { key, row: Number(row) };
}

/**
 * A statement whose text Kysely builds and compiles once per dialect and shape, then runs with each
 * call's values: building a query (immutable nodes, then the compiler's walk) was a tenth of the
 * CPU of a create and of a `GET /jobs/{id}` (docs/benchmarks.md). The build runs with stand-ins for
 * the arguments, so it must use each argument only as a value (no branching on it, no arithmetic,
 * no JSON.stringify: do those before the call and pass the result); branching belongs in the shape,
 * whose key names each compiled variant. A batch statement's rows are a shape too (their count).
 *
 * The cache hangs off Kysely's dialect adapter, which a store's transactions and connections share.
 */
export class PreparedQuery<A extends object, R, S = void, Row extends object = Record<string, never>> {
  readonly #build: (db: Kysely<Database>, p: Params<A, Row>, shape: S) => CompiledQuery<R>;
  readonly #key: (shape: S) => string;
  readonly #byDialect = new WeakMap<object, Map<string, Compiled>>();

  /** `key` names a shape's variant; shapes with the same key must build the same statement. */
  constructor(build: (db: Kysely<Database>, p: Params<A, Row>, shape: S) => CompiledQuery<R>, key: (shape: S) => string = () => '') {
    this.#build = build;
    this.#key = key;
  }

  async execute(db: Kysely<Database>, args: A, shape: S, rows: readonly Row[] = []): Promise<QueryResult<R>> {
    const executor = db.getExecutor();
    let variants = this.#byDialect.get(executor.adapter);
    if (!variants) this.#byDialect.set(executor.adapter, (variants = new Map()));
    const key = this.#key(shape);
    let compiled = variants.get(key);
    if (!compiled) {
      const p: Params<A, Row> = { args: standIns<A>(':'), row: (i) => standIns<Row>(`${i}:`) };
      const query = this.#build(db, p, shape);
      // A stand-in written into the text (sql.raw, sql.lit) would send its placeholder as SQL.
      if (query.sql.includes(MARK)) throw new Error('a prepared statement wrote a parameter stand-in into its SQL text; pass it as a value');
      compiled = { query, slots: query.parameters.map(slotOf) };
      if (variants.size < MAX_VARIANTS) variants.set(key, compiled);
    }
    const values = args as Record<string, unknown>;
    const parameters = compiled.slots.map((s) =>
      'value' in s ? s.value : 'row' in s ? (rows[s.row] as Record<string, unknown> | undefined)?.[s.key] : values[s.key],
    );
    for (let i = 0; i < parameters.length; i++) {
      // A missing argument would bind as NULL and silently match nothing (or write NULL).
      if (parameters[i] === undefined) throw new Error(`prepared statement parameter ${i + 1} has no value`);
    }
    const { sql, query, queryId } = compiled.query;
    return await executor.executeQuery<R>({ sql, query, queryId, parameters } as CompiledQuery<R>);
  }
}
