import type pg from 'pg';

/** Statement texts named at most, per process: Kysely's texts are few, but an `IN (...)` or a batch's VALUES varies with its length. */
const MAX_NAMED = 500;

/** Texts never named: transaction control and statements without parameters (Kysely sends those as they come). */
const UNNAMED = /^\s*(begin|commit|rollback|savepoint|release|set|listen|unlisten)\b/i;

/**
 * Named prepared statements for every statement Kysely sends with parameters: PostgreSQL parses and
 * plans a text once per connection, and each later call skips both (one Bind/Execute instead of
 * Parse/Bind/Execute). Kysely's driver passes only a text and values, so the name is given here,
 * on each pooled client (pg keeps the names it prepared on each connection and prepares a name
 * again on a new one). A text keeps its name for the life of the process; the first MAX_NAMED
 * distinct texts get one, later ones run unnamed as before.
 *
 * PostgreSQL replans a named statement whose tables' schema changed; migrations run at start, before
 * any of them is prepared.
 */
export function nameStatements(pool: pg.Pool): void {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED && !UNNAMED.test(text)) {
      name = `mg${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
      if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && typeof callback !== 'function') {
        const name = nameOf(config);
        if (name !== undefined) return query({ name, text: config, values });
      }
      return callback === undefined ? (values === undefined ? query(config) : query(config, values)) : query(config, values, callback);
    };
  });
}
