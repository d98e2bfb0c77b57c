import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/backends.js';
import { api, cleanup, oneLineError, run, startServer, tempDir } from '../e2e/binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' };

describe('mediagen admin store backup (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('copies the SQLite store of a running server, and a server started on the copy has its jobs', async () => {
    const dir = tempDir();
    const server = await startServer(['--port', '0', '--data-dir', dir, '--engine-latency-ms', '0']);
    const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await api(server.url, `/generate/${MODEL}`, token!, { method: 'POST', body: BODY })).body.job_id as string);
    // Jobs keep being created while the copy is taken: the copy is one consistent snapshot.
    let creating = true;
    const more = (async () => {
      while (creating) await api(server.url, `/generate/${MODEL}`, token!, { method: 'POST', body: BODY });
    })();
    const file = join(tempDir(), 'copy.db');
    const r = await run(['admin', 'store', 'backup', '--to', file, '--data-dir', dir, '--json']);
    creating = false;
    await more;
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { file: string; bytes: number };
    expect(report.file).toBe(file);
    const copy = new SQLite(file, { readonly: true });
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
    const stored = new Set((copy.prepare('SELECT id FROM jobs').all() as { id: string }[]).map((j) => j.id));
    copy.close();
    expect(ids.every((id) => stored.has(id))).toBe(true);
    await server.stop();

    // Restore: the copy as the store of a new data dir.
    const restored = tempDir();
    mkdirSync(restored, { recursive: true });
    copyFileSync(file, join(restored, 'mediagen.db'));
    const second = await startServer(['--port', '0', '--data-dir', restored, '--engine-latency-ms', '0']);
    for (const id of ids) expect((await api(second.url, `/jobs/${id}`, token!)).status).toBe(200);
  });

  it('never overwrites a file, and leaves nothing behind when refused', async () => {
    const dir = tempDir();
    await run(['admin', 'workspace', 'create', '--name', 'acme', '--owner', 'owner@acme.test', '--data-dir', dir]);
    const file = join(tempDir(), 'taken.db');
    writeFileSync(file, 'not a database');
    expect(oneLineError(await run(['admin', 'store', 'backup', '--to', file, '--data-dir', dir]))).toBe(`mediagen: ${file} already exists; a backup never overwrites a file`);
    const missingDir = join(tempDir(), 'no', 'such', 'dir', 'copy.db');
    expect((await run(['admin', 'store', 'backup', '--to', missingDir, '--data-dir', dir])).code).toBe(1);
    expect(existsSync(missingDir)).toBe(false);
  });

  it.runIf(TEST_DATABASE_URL)('points a PostgreSQL store to pg_dump', async () => {
    const pg = await createPostgresDatabase();
    try {
      await run(['admin', 'workspace', 'create', '--name', 'acme', '--owner', 'owner@acme.test', '--database-url', pg.url]);
      const r = await run(['admin', 'store', 'backup', '--to', join(tempDir(), 'copy.db'), '--database-url', pg.url]);
      expect(oneLineError(r)).toMatch(/^mediagen: a PostgreSQL store is backed up with pg_dump/);
    } finally {
      await pg.drop();
    }
  });
});
