import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, api, cleanup } from '../e2e/binary.js';
import { Receiver } from '../helpers/receiver.js';
import { completedJob } from './make-jobs.js';
import { HAVE_BROWSER, expectNoErrors, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';
import type { ConsoleServer } from './browser.js';

const MODEL = 'image/vendor-b/model-b-1';

const runJob = (srv: ConsoleServer, headers: Record<string, string> = {}) =>
  completedJob(srv, MODEL, { prompt: 'a lighthouse at dusk', width: 512, height: 512 }, headers);

/** True once the canvas has drawn something: a pixel that is not transparent. */
const canvasDrew = (page: Page) =>
  page.evaluate(() => {
    const canvas = document.querySelector('canvas');
    if (!canvas || canvas.width === 0) return false;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
    return false;
  });

describe.skipIf(!HAVE_BROWSER)('console: usage and workspace', { timeout: 90_000 }, () => {
  let srv: ConsoleServer;
  let browser: Browser;
  const receiver = new Receiver();
  beforeAll(async () => {
    await receiver.start();
    [srv, browser] = await Promise.all([startConsoleServer({ args: ['--allow-private-urls'] }), launchBrowser()]);
    await runJob(srv);
    await runJob(srv, { 'x-webhook-url': `${receiver.url}/hook` });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver.close();
    await cleanup();
  });

  it('draws the spend chart from GET /usage/summary, lists the spend by model and the balance to the micro-dollar, and says why a From after To or a day the calendar lacks gives no report', async () => {
    const usage = await api(srv.url, '/usage', srv.token);
    const items = usage.body.items as Array<{ cost_usd: string }>;
    expect(items).toHaveLength(2);
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { path: 'usage' });
    const chart = p.page.getByRole('img', { name: /Spend by day, stacked by model/ });
    await chart.waitFor();
    await expect.poll(() => canvasDrew(p.page)).toBe(true);
    const row = p.page.getByRole('row', { name: new RegExp(MODEL) });
    await expect.poll(() => row.textContent()).toContain('2');
    // The balance to the micro-dollar: $10 less two jobs at $0.040400, not rounded to $9.92.
    const workspace = await api(srv.url, '/workspace', srv.token);
    expect(workspace.body.available_usd).toBe('9.919200');
    const balance = p.page.getByRole('region', { name: 'API balance' });
    expect(await balance.textContent()).toContain('Available$9.9192');
    expect(await p.page.getByLabel('Available', { exact: true }).textContent()).toBe('$9.9192');
    expect(await row.textContent()).toContain('$0.0808');
    await screenshot(p.page, 'usage-1280');

    // A range that is none (From after To) is said, not dropped: the fields keep what was chosen.
    const from = p.page.getByLabel('From', { exact: true });
    const to = p.page.getByLabel('To', { exact: true });
    const chosenTo = await to.inputValue();
    await from.fill('2099-01-01');
    await expect.poll(() => p.page.getByRole('alert').textContent()).toContain('“From” day is after the “To” day');
    expect(await from.inputValue()).toBe('2099-01-01');
    expect(await to.inputValue()).toBe(chosenTo);
    expect(await chart.count()).toBe(0);
    // A URL naming a day the calendar lacks says so too, rather than failing.
    await p.page.goto(`${srv.url}/console/usage?from=2026-02-31&to=2026-03-05`);
    await expect.poll(() => p.page.getByRole('alert').textContent()).toContain('“2026-02-31” is not a day of the calendar');
    expectNoErrors(p);
    await p.context.close();
  });

  it('counts a range of more than 50,000 charged jobs exactly, summed by the server: GET /usage/summary, never pages of GET /usage', async () => {
    // 50,001 charges of $0.000001 written into the server's ledger behind its back (one
    // transaction), an hour ago: more than the 50 pages of 1,000 the page once read at most.
    const db = new SQLite(join(srv.dataDir, 'mediagen.db'));
    try {
      const { id } = db.prepare('SELECT id FROM workspaces').get() as { id: string };
      const nowUs = Date.now() * 1000;
      const insert = db.prepare(
        "INSERT INTO ledger_entries (id, workspace_id, kind, amount_micros, job_id, job_type, at) VALUES (?, ?, 'charge', 1, ?, 'image/vendor-x/bulk', ?)",
      );
      db.transaction(() => {
        for (let i = 0; i < 50_001; i++) insert.run(randomUUID(), id, randomUUID(), nowUs - 3_600_000_000 + i);
      })();
    } finally {
      db.close();
    }
    const p = await openPage(browser);
    const asked: string[] = [];
    p.page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith('/usage')) asked.push(url.pathname);
    });
    await signIn(p.page, srv.url, srv.token, { path: 'usage' });
    const row = p.page.getByRole('row', { name: /image\/vendor-x\/bulk/ });
    await expect.poll(() => row.textContent()).toContain('50,001');
    expect(await row.textContent()).toContain('$0.050001');
    // The two real jobs are still counted beside them, in the total.
    expect(await p.page.getByText(/spent on/).textContent()).toContain('50,003');
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((path) => path === '/usage/summary')).toBe(true);
    expectNoErrors(p);
    await p.context.close();
  });

  it('creates a token whose secret is shown once and works, then revokes it after asking, the focus kept on its section', async () => {
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { path: 'workspace' });
    await p.page.getByLabel('New token name').fill('ci bot');
    await p.page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await p.page.getByLabel('New token secret').textContent())!.trim();
    expect(secret).toMatch(/^mg_/);
    expect((await api(srv.url, '/workspace', secret)).status).toBe(200);
    const row = p.page.getByRole('row', { name: /ci bot/ });
    await expect.poll(() => row.textContent()).toContain('active');
    await p.page.getByRole('button', { name: 'Done' }).click();
    expect(await p.page.getByLabel('New token secret').count()).toBe(0);

    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = p.page.getByRole('dialog', { name: 'Revoke ci bot' });
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    expect((await api(srv.url, '/workspace', secret)).status).toBe(200);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => row.textContent()).toContain('revoked');
    expect((await api(srv.url, '/workspace', secret)).status).toBe(401);
    // The Revoke button went with the revocation: the focus is on the section's heading, not lost to the page.
    await expect.poll(() => p.page.evaluate(() => document.activeElement?.textContent)).toBe('API tokens');
    await screenshot(p.page, 'workspace-1280');
    expectNoErrors(p);
    await p.context.close();
  });

  it('creates a token with limits of its own, which the server enforces and the table shows with its spend', async () => {
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { path: 'workspace' });
    await p.page.getByLabel('New token name').fill('campaign app');
    await p.page.getByText('Limits of its own (optional)').click();
    await p.page.getByLabel('Spend limit (USD)').fill('0.05');
    await p.page.getByRole('combobox', { name: /Spend period/ }).selectOption('day');
    await p.page.getByLabel('Models (patterns, comma-separated)').fill('image/vendor-b/*');
    await p.page.getByLabel('Jobs in flight at most').fill('2');
    await p.page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await p.page.getByLabel('New token secret').textContent())!.trim();
    const row = p.page.getByRole('row', { name: /campaign app/ });
    await expect.poll(() => row.textContent()).toContain('$0.00 of $0.05 a day · image/vendor-b/* · 0 of 2 jobs');
    const other = await fetch(`${srv.url}/generate/image/vendor-a/model-a-2/medium`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'p', aspect_ratio: '1:1', resolution: '1K' }),
    });
    expect(other.status).toBe(403);
    await runJob(srv, { authorization: `Bearer ${secret}` });
    await p.page.getByRole('button', { name: 'Done' }).click();
    await p.page.reload();
    await expect.poll(() => p.page.getByRole('row', { name: /campaign app/ }).textContent()).toContain('$0.0404 of $0.05 a day');
    expectNoErrors(p);
    await p.context.close();
  });

  it('shows and rotates the webhook signing secret, asking a second rotation with the older secret stopping now, and lists the delivery the receiver got', async () => {
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(1);
    const p = await openPage(browser, { width: 375, height: 812 });
    await signIn(p.page, srv.url, srv.token, { path: 'workspace' });
    await p.page.getByRole('button', { name: 'Show secret' }).click();
    const before = (await p.page.getByLabel('Webhook signing secret').textContent())!.trim();
    expect(before).toMatch(/^whsec_/);
    const rotate = p.page.getByRole('dialog', { name: 'Rotate secret' });
    await p.page.getByRole('button', { name: 'Rotate secret' }).click();
    // The first rotation: the current secret keeps signing for a day, and nothing stops now.
    expect(await rotate.textContent()).toContain('The current secret keeps signing for 24 hours');
    expect(await rotate.textContent()).not.toContain('stops signing now');
    await rotate.getByRole('button', { name: 'Rotate' }).click();
    await expect.poll(async () => (await p.page.getByLabel('Webhook signing secret').textContent())!.trim()).not.toBe(before);
    await p.page.getByText(/previous secret also signs until/).waitFor();
    // Again within the day: the question says the older secret stops signing at once.
    await p.page.getByRole('button', { name: 'Rotate secret' }).click();
    expect(await rotate.textContent()).toMatch(/The older secret, which still signs until .+, stops signing now/);
    await rotate.getByRole('button', { name: 'Keep it' }).click();

    const deliveries = p.page.getByRole('table', { name: 'Recent webhook deliveries' });
    await expect.poll(() => deliveries.textContent()).toContain('delivered');
    expect(await deliveries.textContent()).toContain(`${receiver.url}/hook`);
    await screenshot(p.page, 'workspace-375');
    expectNoErrors(p);
    await p.context.close();
  });

  it("hides the workspace's management from a member's token", async () => {
    await adminJson(srv.dataDir, ['member', 'add', '--workspace', 'default', '--email', 'dev@example.com', '--role', 'admin', '--as', 'owner@localhost']);
    const made = await adminJson<{ token: string }>(srv.dataDir, ['token', 'create', '--workspace', 'default', '--name', 'dev', '--as', 'dev@example.com']);
    await adminJson(srv.dataDir, ['member', 'add', '--workspace', 'default', '--email', 'dev@example.com', '--role', 'member', '--as', 'owner@localhost']);
    const p = await openPage(browser);
    await signIn(p.page, srv.url, made.token);
    expect(await p.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Workspace' }).count()).toBe(0);
    await p.page.goto(`${srv.url}/console/workspace`);
    await p.page.getByText("Only the workspace's owners and admins manage").waitFor();
    expectNoErrors(p);
    await p.context.close();
  });
});
