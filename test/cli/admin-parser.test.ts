import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_COMMANDS } from '../../src/cli/admin.js';
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/backends.js';
import { adminJson, cleanup, oneLineError, run, tempDir } from '../e2e/binary.js';

const OWNER = 'owner@acme.test';
const COMMON = '--data-dir, --database-url, --config, --json, --help';
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** A path under a fresh temporary directory that does not exist (a mistyped --data-dir). */
const missingDir = () => join(tempDir(), 'typo');

// Each CLI run starts a node process (most of a second), so tests get more than the default time.
describe('mediagen admin on its parser (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  describe('each command accepts only its own options', () => {
    it.each([
      [
        'an unknown option, listing the valid ones',
        ['token', 'list', '--workspace', 'acme', '--colour', 'red'],
        `mediagen: unknown option '--colour' for 'admin token list'; its options are --workspace, ${COMMON}`,
      ],
      [
        'an unknown option given as --flag=value',
        ['workspace', 'list', '--colour=red'],
        `mediagen: unknown option '--colour' for 'admin workspace list'; its options are ${COMMON}`,
      ],
      [
        "another command's option, naming that command",
        ['token', 'list', '--workspace', 'acme', '--owner', 'x@acme.test'],
        `mediagen: 'admin token list' takes no --owner (an option of workspace create); its options are --workspace, ${COMMON}`,
      ],
      [
        'an option of many other commands',
        ['worker-token', 'list', '--workspace', 'acme'],
        `mediagen: 'admin worker-token list' takes no --workspace (an option of workspace set, member add, member list and 9 more); its options are ${COMMON}`,
      ],
      [
        'a role flag on a command anyone may run',
        ['balance', 'show', '--workspace', 'acme', '--as', OWNER],
        `mediagen: 'admin balance show' takes no --as (an option of member add, token create, token revoke and 5 more); its options are --workspace, ${COMMON}`,
      ],
      [
        'a word after the command',
        ['token', 'list', '--workspace', 'acme', 'extra'],
        "mediagen: 'admin token list' takes options only, not 'extra'; its options are --workspace, --data-dir, --database-url, --config, --json",
      ],
      ['an option whose value is missing before another option', ['token', 'list', '--workspace', '--json'], 'mediagen: --workspace needs a value, not the option --json'],
    ])('refuses %s in one line, before opening any store', async (_what, args, message) => {
      const dir = missingDir();
      const r = await run(['admin', ...args, '--data-dir', dir]);
      expect(oneLineError(r)).toBe(message);
      expect(r.stdout).toBe('');
      expect(existsSync(dir)).toBe(false);
    });

    it('refuses options before the command, naming the command list', async () => {
      const r = await run(['admin', '--data-dir', missingDir(), 'workspace', 'list']);
      expect(oneLineError(r)).toMatch(/^mediagen: options go after the command \(mediagen admin <command> \[options\]\), not '--data-dir' before it; the commands are workspace create, /);
      expect(oneLineError(await run(['admin', 'token']))).toMatch(/^mediagen: incomplete admin command 'token'; its commands are token create, token list, token revoke /);
      expect(oneLineError(await run(['admin', 'workspace', 'create', '--owner', OWNER, '--name']))).toBe('mediagen: --name needs a value');
    });
  });

  it('--help after any command prints that command\'s usage with exactly its options, and exits 0', async () => {
    for (const c of ADMIN_COMMANDS) {
      const r = await run(['admin', ...c.name.split(' '), '--help']);
      expect(r.code, c.name).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout.startsWith(`Usage: mediagen admin ${c.name} [options]\n\n${c.summary.slice(0, 20)}`), c.name).toBe(true);
      const flags = [...r.stdout.matchAll(/^ {2}(?:-h, )?(--[a-z-]+)/gm)].map((m) => m[1]);
      expect(flags.sort(), c.name).toEqual([...c.options.map((o) => `--${o.flag}`), '--data-dir', '--database-url', '--config', '--json', '--help'].sort());
      expect(r.stdout.split('(required)').length - 1, c.name).toBe(c.options.filter((o) => o.required).length);
    }
    // -h too, and wherever it stands among the command's options.
    const h = await run(['admin', 'token', 'create', '--workspace', 'acme', '-h']);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/^Usage: mediagen admin token create \[options\]/);
  });

  it('mediagen --version, -V and mediagen admin --version print the package version', async () => {
    for (const args of [['--version'], ['-V'], ['admin', '--version'], ['admin', '-V']]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toBe(`${VERSION}\n`);
      expect(r.stderr).toBe('');
    }
    // Not an option of a command.
    expect(oneLineError(await run(['admin', 'workspace', 'list', '--version']))).toMatch(/^mediagen: unknown option '--version' for 'admin workspace list'/);
  });

  describe('a --data-dir that holds no store', () => {
    it('is refused by every command but workspace create, and nothing is made there', async () => {
      const typo = missingDir();
      const empty = tempDir();
      for (const args of [
        ['workspace', 'list'],
        ['token', 'list', '--workspace', 'acme'],
        ['worker-token', 'create', '--name', 'gpu'],
        ['balance', 'add', '--workspace', 'acme', '--usd', '5', '--as', OWNER],
      ]) {
        for (const dir of [typo, empty]) {
          const r = await run(['admin', ...args, '--data-dir', dir]);
          expect(oneLineError(r), args.join(' ')).toBe(
            `mediagen: no mediagen store in ${dir} (no mediagen.db there); check --data-dir, or create a store with 'mediagen admin workspace create' or 'mediagen serve'`,
          );
        }
      }
      expect(existsSync(typo)).toBe(false);
      expect(readdirSync(empty)).toEqual([]);
    });

    it('is made by workspace create (the bootstrap of a deployment), after which every command works', async () => {
      const dir = join(tempDir(), 'fresh', 'data');
      const ws = await adminJson<{ workspace_id: string }>(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
      expect(existsSync(join(dir, 'mediagen.db'))).toBe(true);
      const list = await adminJson<{ workspace_id: string }[]>(dir, ['workspace', 'list']);
      expect(list.map((w) => w.workspace_id)).toEqual([ws.workspace_id]);
    });
  });

  it.runIf(TEST_DATABASE_URL)('a PostgreSQL database with no migrations table is refused (its URL not shown) until workspace create makes the store', async () => {
    const db = await createPostgresDatabase();
    try {
      const r = await run(['admin', 'workspace', 'list', '--database-url', db.url, '--data-dir', missingDir()]);
      const line = oneLineError(r);
      expect(line).toBe(
        "mediagen: the PostgreSQL database holds no mediagen store (no migrations table); check --database-url, or create a store with 'mediagen admin workspace create' or 'mediagen serve'",
      );
      const created = await run(['admin', 'workspace', 'create', '--name', 'acme', '--owner', OWNER, '--database-url', db.url, '--json']);
      expect(created.code, created.stderr).toBe(0);
      const listed = await run(['admin', 'workspace', 'list', '--database-url', db.url, '--json']);
      expect((JSON.parse(listed.stdout) as { name: string }[]).map((w) => w.name)).toEqual(['acme']);
    } finally {
      await db.drop();
    }
  });

  it('an unreachable PostgreSQL server is refused in one line', async () => {
    const r = await run(['admin', 'workspace', 'list', '--database-url', 'postgres://nobody@127.0.0.1:1/none']);
    expect(oneLineError(r)).toMatch(/^mediagen: cannot open the PostgreSQL database: .*ECONNREFUSED/);
  });
});
