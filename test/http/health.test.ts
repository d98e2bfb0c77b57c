import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { Json, TestApp } from '../helpers/app.js';
import { backends, createPostgresDatabase } from '../helpers/backends.js';
import type { Backend } from '../helpers/backends.js';
import { uploadAsset } from '../helpers/asset-files.js';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const inject = (url: string) => t.app.inject({ method: 'GET', url });

/** The same backend, plus a side door to run SQL on its database behind the store's back. */
async function withSideDoor(backend: Backend): Promise<{ backend: Backend; exec(statement: string): Promise<void>; drop(): Promise<void> }> {
  if (backend.name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-health-'));
    const file = join(dir, 'mediagen.db');
    return {
      backend: { ...backend, create: async () => ({ open: () => openSqliteStore(file), drop: async () => rmSync(dir, { recursive: true, force: true }) }) },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
      exec: async (statement) => {
        const db = new SQLite(file);
        try {
          db.exec(statement);
        } finally {
          db.close();
        }
      },
    };
  }
  const db = await createPostgresDatabase();
  return {
    backend: { ...backend, create: async () => ({ open: () => openPostgresStore(db.url, { poolSize: 5 }), drop: db.drop }) },
    drop: db.drop,
    exec: async (statement) => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end();
      }
    },
  };
}

describe.each(backends)('health endpoints on $name', (backend) => {
  it('GET /healthz answers 200 {"status":"ok"} without a token', async () => {
    t = await createTestApp({ backend });
    const res = await inject('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 with every check ok when the store takes writes and the schema is current', async () => {
    t = await createTestApp({ backend });
    const res = await inject('/readyz');
    expect(res.statusCode).toBe(200);
    // And the FFmpeg in use (issue 32): whatever this machine has, named by version and source, never by path.
    const tool = expect.stringMatching(/^\S.* \((PATH|bundled)\)$/);
    expect(res.json()).toEqual({ status: 'ready', checks: { store: 'ok', migrations: 'ok', disk: 'ok' }, media: { ffmpeg: tool, ffprobe: tool } });
  });

  it('GET /readyz answers 503 naming the store when the store is unreachable, and /healthz stays 200', async () => {
    t = await createTestApp({ backend });
    await t.store.close();
    const res = await inject('/readyz');
    expect(res.statusCode).toBe(503);
    const body = res.json() as Json;
    expect(body).toEqual({ error: 'not ready: store unreachable', checks: { store: 'unreachable', migrations: 'unknown', disk: 'ok' } });
    expect(res.headers['retry-after']).toBe('5');
    expect((await inject('/healthz')).statusCode).toBe(200);
  });

  it('GET /readyz answers 503 draining once the process starts draining, checking nothing; /healthz and the API go on', async () => {
    t = await createTestApp({ backend });
    t.services.readiness.startDraining();
    // Nothing is checked: the answer is the drain.
    const res = await inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'not ready: draining (the server is shutting down)' });
    expect(res.headers['retry-after']).toBe('5');
    expect((await inject('/healthz')).statusCode).toBe(200);
    expect((await generate(t, 'image/vendor-b/model-b-1', { prompt: 'a red fox' })).statusCode).toBe(200);
  });

  it('GET /readyz answers 503 when a migration of this code is not applied to the store', async () => {
    const side = await withSideDoor(backend);
    t = await createTestApp({ backend: side.backend });
    // The probe reads Kysely's own ledger of applied migrations; forget the newest one.
    await side.exec(`DELETE FROM kysely_migration WHERE name = '0009_fault_backoff'`);
    const res = await inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'not ready: migrations 1 pending', checks: { store: 'ok', migrations: '1 pending', disk: 'ok' } });
  });

  it('GET /readyz and job creation answer 503 while free space in the data dir is below the floor; reads go on', async () => {
    t = await createTestApp({ backend });
    const created = await generate(t, 'image/vendor-b/model-b-1', { prompt: 'a red fox' });
    expect(created.statusCode).toBe(200);
    await t.close();
    t = await createTestApp({ backend, storage: { dir: '/tmp', minFreeBytes: 2 ** 50 } });
    const ready = await inject('/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({
      error: 'not ready: disk free space below min_free_disk_bytes',
      checks: { store: 'ok', migrations: 'ok', disk: 'free space below min_free_disk_bytes' },
    });
    const refused = await generate(t, 'image/vendor-b/model-b-1', { prompt: 'a red fox' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('30');
    expect(refused.json()).toEqual({ error: 'the server cannot store new jobs right now: its disk is full; retry later' });
    expect((await get(t, '/jobs')).statusCode).toBe(200);
    // An upload is refused the same way, before its body is read, and says what it could not store.
    const upload = await uploadAsset(t.app, t.token, { bytes: Buffer.from('\x89PNG\r\n\x1a\n'), filename: 'a.png' });
    expect(upload.statusCode).toBe(503);
    expect(upload.json()).toEqual({ error: 'the server cannot store new uploads right now: its disk is full; retry later' });
    // Without a token, the refusal is still 401: the guard runs after authentication.
    const anonymous = await t.app.inject({ method: 'POST', url: '/generate/image/vendor-b/model-b-1', payload: {} });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe.skipIf(!backends.some((b) => b.name === 'postgres'))('health endpoints on a PostgreSQL that goes away', () => {
  it('GET /readyz answers 503 store unreachable once the database is dropped under a running server', async () => {
    const side = await withSideDoor(backends.find((b) => b.name === 'postgres')!);
    t = await createTestApp({ backend: side.backend });
    expect((await inject('/readyz')).statusCode).toBe(200);
    await side.drop();
    const res = await inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'not ready: store unreachable', checks: { store: 'unreachable' } });
    // Reads that need the database now fail as the server's passing trouble: 503, not 500.
    const list = await get(t, '/jobs');
    expect(list.statusCode).toBe(503);
    expect(list.json()).toEqual({ error: 'the server cannot answer this request right now: its database is unreachable; retry later' });
  });
});

describe('health endpoints in the API document', () => {
  it('are not among the documented (authenticated) paths', async () => {
    t = await createTestApp();
    const doc = (await inject('/openapi.json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).not.toContain('/healthz');
    expect(Object.keys(doc.paths)).not.toContain('/readyz');
  });
});
