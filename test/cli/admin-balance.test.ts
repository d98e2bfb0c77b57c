import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, api, cleanup, oneLineError, run, startServer, tempDir } from '../e2e/binary.js';

const OWNER = 'owner@acme.test';
const B1 = '/generate/image/vendor-b/model-b-1';

const admin = (dir: string, ...args: string[]) => run(['admin', ...args, '--data-dir', dir]);
const show = (dir: string, ws = 'acme') => adminJson<Record<string, string>>(dir, ['balance', 'show', '--workspace', ws]);

async function acme(dir: string): Promise<string> {
  const { workspace_id } = await adminJson<{ workspace_id: string }>(dir, ['workspace', 'create', '--name', 'acme', '--owner', OWNER]);
  await adminJson(dir, ['member', 'add', '--workspace', 'acme', '--email', 'admin@acme.test', '--role', 'admin', '--as', OWNER]);
  return workspace_id;
}

// Each CLI run starts a node process (most of a second), so tests get more than the default time.
describe('mediagen admin balance (compiled binary)', { timeout: 90_000 }, () => {
  afterEach(cleanup);

  it('shows a new workspace at zero, then what owners add, as six-place decimal strings', async () => {
    const dir = tempDir();
    const id = await acme(dir);
    expect(await show(dir)).toEqual({ workspace_id: id, balance_usd: '0.000000', held_usd: '0.000000' });
    expect(await adminJson(dir, ['balance', 'add', '--workspace', 'acme', '--usd', '25.50', '--as', OWNER])).toEqual({
      workspace_id: id,
      balance_usd: '25.500000',
      held_usd: '0.000000',
    });
    await adminJson(dir, ['balance', 'add', '--workspace', id, '--usd', '5', '--as', 'Owner@Acme.test']);
    await adminJson(dir, ['balance', 'add', '--workspace', 'acme', '--usd', '10000.00', '--as', OWNER]);
    expect(await show(dir, id)).toEqual({ workspace_id: id, balance_usd: '10030.500000', held_usd: '0.000000' });
    const text = await admin(dir, 'balance', 'show', '--workspace', 'acme');
    expect(text.stdout).toBe(`workspace ${id}: balance $10030.500000, of which $0.000000 is held for jobs in progress\n`);
  });

  it('refuses amounts outside $5.00 to $10,000.00 or finer than cents, and leaves the balance unchanged', async () => {
    const dir = tempDir();
    await acme(dir);
    for (const usd of ['4.99', '10000.01', '5.001', '-5', '1e3', 'ten', '']) {
      const r = await admin(dir, 'balance', 'add', '--workspace', 'acme', `--usd=${usd}`, '--as', OWNER);
      expect(oneLineError(r), usd).toMatch(usd === '' ? /--usd is required/ : /--usd must be an amount in dollars and cents from 5\.00 to 10000\.00/);
    }
    expect((await show(dir)).balance_usd).toBe('0.000000');
  });

  it('lets only owners add balance: admins and non-members are refused', async () => {
    const dir = tempDir();
    await acme(dir);
    expect(oneLineError(await admin(dir, 'balance', 'add', '--workspace', 'acme', '--usd', '10', '--as', 'admin@acme.test'))).toBe(
      'mediagen: only owners can add API balance; admin@acme.test is an admin',
    );
    expect(oneLineError(await admin(dir, 'balance', 'add', '--workspace', 'acme', '--usd', '10', '--as', 'stranger@else.test'))).toBe(
      "mediagen: only owners can add API balance; stranger@else.test is not a member of workspace 'acme'",
    );
    expect(oneLineError(await admin(dir, 'balance', 'show', '--workspace', 'nope'))).toBe("mediagen: workspace 'nope' not found");
    expect((await show(dir)).balance_usd).toBe('0.000000');
  });

  it('the zero-setup workspace starts with $10.00; a running server refuses with 402 at zero and accepts after a top-up', async () => {
    const dir = tempDir();
    const server = await startServer(['--port', '0', '--data-dir', dir, '--role', 'api']);
    expect(await show(dir, 'default')).toMatchObject({ balance_usd: '10.000000', held_usd: '0.000000' });

    await acme(dir);
    const { token } = await adminJson<{ token: string }>(dir, ['token', 'create', '--workspace', 'acme', '--name', 'ci', '--as', OWNER]);
    const refused = await api(server.url, B1, token, { method: 'POST', body: { prompt: 'a fox' } });
    expect(refused.status).toBe(402);
    expect(refused.body.message).toMatch(/separate from the workspace's compute-unit balance/);
    await adminJson(dir, ['balance', 'add', '--workspace', 'acme', '--usd', '5', '--as', OWNER]);
    expect((await api(server.url, B1, token, { method: 'POST', body: { prompt: 'a fox' } })).status).toBe(200);
    expect(await show(dir)).toMatchObject({ balance_usd: '5.000000', held_usd: '0.040400' });
  });
});
