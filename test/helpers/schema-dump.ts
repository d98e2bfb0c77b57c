import SQLite from 'better-sqlite3';
import pg from 'pg';

/**
 * A migrated store's schema as stable text (test/store/schema-dump.test.ts): per table, in name
 * order, its columns in their order, then its constraints, indexes and triggers by name. Nothing
 * that differs between two fresh stores of one backend goes in (database name, OIDs, times, the
 * order catalog rows come back in), so the text changes only when the schema does. Kysely's own
 * bookkeeping tables are left out: their shape is Kysely's, not ours.
 */

/** How to rewrite the committed dumps after a schema change that is meant. */
export const REGENERATE = 'UPDATE_SCHEMA_DUMP=1 npx vitest run test/store/schema-dump.test.ts (with TEST_DATABASE_URL set for the PostgreSQL one)';

const KYSELY_TABLES = new Set(['kysely_migration', 'kysely_migration_lock']);

/** Code-point order: the same on every machine, whatever the database's collation. */
const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** One line of SQL text, however the migration laid it out. */
const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The text's non-blank lines, without the indentation they share (a function body as the migration wrote it). */
function dedent(text: string): string[] {
  const lines = text.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
  const indent = Math.min(...lines.map((l) => l.length - l.trimStart().length));
  return lines.map((l) => l.slice(indent));
}

interface Section {
  readonly name: string;
  readonly lines: readonly string[];
}

function render(backend: string, tables: readonly Section[], extra: readonly string[] = []): string {
  const header = [
    `-- The ${backend} schema a fresh store has after every migration.`,
    `-- Written by ${REGENERATE}; do not edit by hand.`,
  ];
  const body = [...tables].sort(byName).map((t) => [`table ${t.name}`, ...t.lines.map((l) => `  ${l}`)].join('\n'));
  return [header.join('\n'), ...body, ...extra].join('\n\n') + '\n';
}

/** The text inside the parentheses that open at `open` (an index into `text`), nesting respected. */
function parenthesized(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  throw new Error(`unbalanced parentheses in ${text}`);
}

/** Named CHECK constraints of a SQLite CREATE TABLE statement (SQLite's pragmas do not list them). */
function sqliteChecks(createTable: string): { name: string; line: string }[] {
  return [...createTable.matchAll(/constraint\s+"?(\w+)"?\s+check\s*\(/gi)].map((m) => ({
    name: m[1]!,
    line: `constraint ${m[1]} check (${oneLine(parenthesized(createTable, m.index + m[0].length - 1))})`,
  }));
}

export function dumpSqliteSchema(file: string): string {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const all = <T>(query: string, ...params: unknown[]) => db.prepare(query).all(...params) as T[];
    type Master = { name: string; tbl_name: string; sql: string | null };
    const tables = all<Master>(`SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).filter(
      (t) => !KYSELY_TABLES.has(t.name),
    );
    const sections = tables.map((table): Section => {
      type Column = { cid: number; name: string; type: string; notnull: number; dflt_value: string | null; pk: number };
      const columns = all<Column>('SELECT cid, name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid', table.name);
      const lines = columns.map((c) =>
        [`column ${c.name} ${c.type.toLowerCase()}`, c.notnull ? ' not null' : '', c.dflt_value === null ? '' : ` default ${c.dflt_value}`].join(''),
      );
      const key = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
      if (key.length > 0) lines.push(`primary key (${key.map((c) => c.name).join(', ')})`);
      type ForeignKey = { id: number; seq: number; table: string; from: string; to: string; on_update: string; on_delete: string };
      const fks = all<ForeignKey>('SELECT id, seq, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq', table.name);
      const fkLines = [...new Set(fks.map((f) => f.id))].map((id) => {
        const parts = fks.filter((f) => f.id === id);
        const f = parts[0]!;
        const actions = [f.on_update !== 'NO ACTION' ? ` on update ${f.on_update.toLowerCase()}` : '', f.on_delete !== 'NO ACTION' ? ` on delete ${f.on_delete.toLowerCase()}` : ''];
        return `foreign key (${parts.map((p) => p.from).join(', ')}) references ${f.table} (${parts.map((p) => p.to).join(', ')})${actions.join('')}`;
      });
      lines.push(...fkLines.sort(), ...sqliteChecks(table.sql ?? '').sort(byName).map((c) => c.line));

      type IndexRow = { name: string; unique: number; origin: string; partial: number };
      const indexes = all<IndexRow>('SELECT name, "unique", origin, partial FROM pragma_index_list(?)', table.name).sort(byName);
      for (const index of indexes) {
        type IndexColumn = { seqno: number; name: string | null; desc: number };
        const cols = all<IndexColumn>('SELECT seqno, name, "desc" FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno', index.name);
        const names = cols.map((c) => `${c.name ?? '<expression>'}${c.desc ? ' desc' : ''}`).join(', ');
        // The origin says what made it: a CREATE INDEX ('c'), a UNIQUE ('u') or PRIMARY KEY ('pk') constraint.
        const made = index.origin === 'c' ? '' : `, from ${index.origin === 'pk' ? 'the primary key' : 'a unique constraint'}`;
        const sql = all<{ sql: string | null }>(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, index.name)[0]?.sql ?? '';
        const where = index.partial ? ` where ${oneLine(/\swhere\s([\s\S]*)$/i.exec(sql)?.[1] ?? '?')}` : '';
        lines.push(`index ${index.name}${index.unique ? ' unique' : ''} (${names})${where}${made}`);
      }
      const triggers = all<Master>(`SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?`, table.name).sort(byName);
      for (const t of triggers) {
        const body = oneLine(t.sql ?? '').replace(/^create\s+trigger\s+"?\w+"?\s*/i, '');
        lines.push(`trigger ${t.name}: ${body}`);
      }
      return { name: table.name, lines };
    });
    return render('SQLite', sections);
  } finally {
    db.close();
  }
}

export async function dumpPostgresSchema(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = async <T>(query: string): Promise<T[]> => (await client.query(query)).rows as T[];
    type Column = { table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null };
    const columns = await rows<Column>(`
      SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
      WHERE table_schema = current_schema() ORDER BY ordinal_position`);
    const tableNames = await rows<{ name: string }>(`
      SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`);
    // Not NOT NULL constraints (PostgreSQL 18 lists them here too): the column lines say nullability.
    type Constraint = { table: string; name: string; def: string };
    const constraints = await rows<Constraint>(`
      SELECT r.relname AS table, c.conname AS name, pg_get_constraintdef(c.oid, true) AS def
      FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
      WHERE n.nspname = current_schema() AND c.contype <> 'n'`);
    type Index = { table: string; name: string; def: string };
    const indexes = await rows<Index>(`SELECT tablename AS table, indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = current_schema()`);
    type Trigger = { table: string; name: string; def: string };
    const triggers = await rows<Trigger>(`
      SELECT c.relname AS table, t.tgname AS name, pg_get_triggerdef(t.oid, true) AS def
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND NOT t.tgisinternal`);
    type Fn = { name: string; args: string; result: string; language: string; body: string };
    const functions = await rows<Fn>(`
      SELECT p.proname AS name, pg_get_function_identity_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS result,
             l.lanname AS language, p.prosrc AS body
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
      WHERE n.nspname = current_schema()`);

    const sections = tableNames
      .filter((t) => !KYSELY_TABLES.has(t.name))
      .map((table): Section => {
        const lines = columns
          .filter((c) => c.table_name === table.name)
          .map((c) => [`column ${c.column_name} ${c.data_type}`, c.is_nullable === 'NO' ? ' not null' : '', c.column_default === null ? '' : ` default ${c.column_default}`].join(''));
        const own = <T extends { table: string; name: string }>(list: T[]) => list.filter((x) => x.table === table.name).sort(byName);
        for (const c of own(constraints)) lines.push(`constraint ${c.name} ${c.def}`);
        for (const i of own(indexes)) {
          // `CREATE [UNIQUE] INDEX name ON schema.table USING method (...)`: the name and table are said already.
          const unique = /^CREATE UNIQUE INDEX/.test(i.def) ? ' unique' : '';
          lines.push(`index ${i.name}${unique} ${i.def.replace(/^.*? USING /, 'using ')}`);
        }
        for (const t of own(triggers)) lines.push(`trigger ${t.name}: ${oneLine(t.def.replace(/^CREATE TRIGGER \S+ /, ''))}`);
        return { name: table.name, lines };
      });
    const fnSections = functions
      .map((f) => ({ name: `${f.name}(${f.args})`, f }))
      .sort(byName)
      .map(({ name, f }) => [`function ${name} returns ${f.result} language ${f.language}`, ...dedent(f.body).map((l) => `  ${l}`)].join('\n'));
    return render('PostgreSQL', sections, fnSections);
  } finally {
    await client.end();
  }
}
