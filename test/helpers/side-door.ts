import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { createPostgresDatabase } from './backends.js';
import type { Backend } from './backends.js';

/** The same backend on one known database, and a way to read its rows behind the store's back. */
export async function readableBackend(backend: Backend): Promise<{ backend: Backend; rows(query: string): Promise<Record<string, unknown>[]> }> {
  if (backend.name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-side-'));
    const file = join(dir, 'mediagen.db');
    return {
      backend: { ...backend, create: async () => ({ open: () => openSqliteStore(file), drop: async () => rmSync(dir, { recursive: true, force: true }) }) },
      rows: async (query) => {
        const db = new SQLite(file, { readonly: true });
        try {
          return db.prepare(query).all() as Record<string, unknown>[];
        } finally {
          db.close();
        }
      },
    };
  }
  const db = await createPostgresDatabase({ migrated: true });
  return {
    backend: { ...backend, create: async () => ({ open: () => openPostgresStore(db.url, { poolSize: 5 }), drop: db.drop }) },
    rows: async (query) => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        return (await client.query(query)).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    },
  };
}
