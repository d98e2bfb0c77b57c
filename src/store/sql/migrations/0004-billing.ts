import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';

/** 0004_billing: the ledger and the balances, with the checks that keep the money whole. */
export const BILLING_MIGRATION: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('ledger_entries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('amount_micros', 'bigint', (c) => c.notNull())
      .addColumn('job_id', 'text')
      .addColumn('job_type', 'text')
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text')
      .addCheckConstraint('ledger_amount_positive', sql`amount_micros >= 0`)
      .addCheckConstraint('ledger_kind', sql`kind IN ('top_up', 'hold', 'charge', 'release')`)
      .execute();
    // The rule that makes a double charge impossible. Top-ups have no job; NULLs never collide.
    await db.schema.createIndex('ledger_job_kind').unique().on('ledger_entries').columns(['job_id', 'kind']).execute();
    await db.schema.createIndex('ledger_usage').on('ledger_entries').columns(['workspace_id', 'kind', 'at']).execute();
    await db.schema
      .createTable('balances')
      .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
      .addColumn('balance_micros', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('held_micros', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_charge_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .addCheckConstraint('balances_held_nonnegative', sql`held_micros >= 0`)
      .addCheckConstraint('balances_covers_holds', sql`balance_micros >= held_micros`)
      .execute();
  },
};
