import type { BenchDatabase } from './database.js';

/** Time columns shifted back with each seeded copy, so copies keep the template's durations. */
const TIMES = new Set(['created_at', 'updated_at', 'completed_at', 'started_at']);

/**
 * Inserts copies `from`..`to` (inclusive, 1-based) of a finished template job with one SQL
 * statement: a recursive CTE on SQLite, generate_series on PostgreSQL. Copy `i` gets a fixed id and
 * output key from `i` and is `i` ms older than the template, so creation times stay unique per API
 * user and GET /jobs pages through them in order. Every other column is the template's, whatever
 * columns the schema has by then. Returns the milliseconds it took.
 */
export async function seedJobs(db: BenchDatabase, templateId: string, from: number, to: number): Promise<number> {
  if (to < from) return 0;
  const [template] = await db.query('SELECT * FROM jobs WHERE id = ?', [templateId]);
  if (!template) throw new Error(`no template job ${templateId}`);
  const pg = db.backend === 'postgres';
  const columns = Object.keys(template);
  const expr = (c: string): string => {
    if (c === 'id') return pg ? `'00000000-0000-4000-8000-' || lpad(n.i::text, 12, '0')` : `printf('00000000-0000-4000-8000-%012d', n.i)`;
    if (c === 'output_key') return pg ? `'seed' || n.i::text` : `'seed' || n.i`;
    if (TIMES.has(c)) return pg ? `t.${c} - n.i::bigint * 1000` : `t.${c} - n.i * 1000`;
    return `t."${c}"`;
  };
  const list = columns.map((c) => `"${c}"`).join(', ');
  const select = `SELECT ${columns.map(expr).join(', ')}`;
  const t0 = performance.now();
  if (pg) {
    await db.query(`INSERT INTO jobs (${list}) ${select} FROM generate_series(?::int, ?::int) AS n(i), jobs t WHERE t.id = ?`, [from, to, templateId]);
    // Autovacuum would analyze a table that grew this much within a minute; the bench does not wait for it.
    await db.query('ANALYZE jobs');
    // Otherwise the checkpoint of a million new rows lands in the middle of a measure.
    await db.query('CHECKPOINT').catch(() => undefined);
  } else {
    await db.query(
      `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?) INSERT INTO jobs (${list}) ${select} FROM n, jobs t WHERE t.id = ?`,
      [from, to, templateId],
    );
    // The same for SQLite: copy the WAL into the database now, not at some create's commit.
    await db.query('PRAGMA wal_checkpoint(TRUNCATE)');
  }
  return performance.now() - t0;
}
