import { createServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../e2e/binary.js';
import { HAVE_BROWSER, expectNoErrors, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';
import type { ConsoleServer } from './browser.js';
import { completedJob, createJob, getJob, waitForEnd } from './make-jobs.js';
import type { ApiJob } from './make-jobs.js';

/** The fast image model: a 512 x 512 PNG at once with --engine-latency-ms 0. */
const IMAGE = 'image/vendor-b/model-b-1';

/** The row of a job in the jobs list: found by its link's name, "Job <id>". */
const rowOf = (page: Page, id: string) => page.getByRole('row').filter({ has: page.getByRole('link', { name: `Job ${id}` }) });

describe.skipIf(!HAVE_BROWSER)('console: jobs list and job page', { timeout: 60_000 }, () => {
  let srv: ConsoleServer;
  let browser: Browser;
  let receiver: HttpServer;
  const received: string[] = [];
  let done: ApiJob;
  let failed: ApiJob;
  let doomed: ApiJob;

  beforeAll(async () => {
    // A webhook receiver on this machine (hence --allow-private-urls): the job page lists its attempts.
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(req.url ?? '');
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    [srv, browser] = await Promise.all([startConsoleServer({ args: ['--allow-private-urls'] }), launchBrowser()]);
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    [done, failed, doomed] = await Promise.all([
      completedJob(srv, IMAGE, { prompt: 'a lighthouse on a cliff at dusk', width: 512, height: 512 }, { 'x-webhook-url': hook }),
      createJob(srv, IMAGE, { prompt: 'a fox [mediagen:fail=engine_failed]', width: 512, height: 512 }).then((j) => waitForEnd(srv, j.job_id)),
      completedJob(srv, IMAGE, { prompt: 'a short-lived fox', width: 512, height: 512 }),
    ]);
    expect(failed.status).toBe('failed');
  });
  afterAll(async () => {
    await browser?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await cleanup();
  });

  it('lists a completed job, and its page shows the request, the timeline, the cost, the webhook and a working download link', async () => {
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { path: 'jobs' });
    const row = rowOf(p.page, done.job_id);
    await row.waitFor();
    expect(await row.textContent()).toContain('completed');
    expect(await row.textContent()).toContain(IMAGE);
    expect(await rowOf(p.page, failed.job_id).textContent()).toContain('failed');
    await screenshot(p.page, 'jobs-1280');

    await row.getByRole('link').click();
    await p.page.waitForURL(`${srv.url}/console/jobs/${done.job_id}`);
    await p.page.getByRole('heading', { name: 'Timeline' }).waitFor();
    // The request as stored, defaults filled in.
    const request = JSON.parse((await p.page.locator('pre.request-json').textContent())!) as Record<string, unknown>;
    expect(request).toMatchObject({ prompt: 'a lighthouse on a cliff at dusk', width: 512, height: 512 });
    // Every status it took, oldest first.
    const steps = await p.page.locator('ol.timeline > li .badge').allTextContents();
    expect(steps[0]).toBe('queued');
    expect(steps.at(-1)).toBe('completed');
    expect(steps.length).toBeGreaterThanOrEqual(3);
    expect(await p.page.locator('dd.job-cost').textContent()).toMatch(/^\$\d+\.\d+ charged$/);
    // The image shows, and its download link fetches the PNG without a token.
    const img = p.page.getByRole('img', { name: 'a lighthouse on a cliff at dusk' });
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(512);
    const link = p.page.getByRole('link', { name: /^Download output\.png$/ });
    const url = await link.getAttribute('href');
    expect(url).toMatch(new RegExp(`^${srv.url}/outputs/`));
    const file = await fetch(url!);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(0);
    const download = p.page.waitForEvent('download');
    await link.click();
    expect((await download).suggestedFilename()).toBe('output.png');
    // The webhook: delivered to the receiver, the attempt with its answer and time.
    await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(0);
    const webhook = p.page.getByRole('region', { name: 'Webhook' });
    await expect.poll(async () => (await webhook.textContent()) ?? '', { timeout: 15_000 }).toContain('delivered');
    expect(await webhook.textContent()).toContain('HTTP 204');
    await p.page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(p.page, 'job-1280');

    // A job created without a webhook says so.
    await p.page.goto(`${srv.url}/console/jobs/${failed.job_id}`);
    await p.page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await expect.poll(() => p.page.getByRole('region', { name: 'Webhook' }).textContent()).toContain('No webhook was requested.');
    expect(await p.page.locator('.note-error').textContent()).toContain('engine_failed');
    expect(await p.page.locator('dd.job-cost').textContent()).toContain('not billed');
    expectNoErrors(p);
    await p.context.close();
  });

  it('cancels a slow job from its page through the confirm dialog, the focus kept on the page; the page and the list show it live', async () => {
    const slow = await createJob(srv, IMAGE, { prompt: 'a slow fox [mediagen:delay=30000]', width: 512, height: 512 });
    // Two tabs, each signed in (the token is the tab's): the list in one, the job in the other.
    const l = await openPage(browser);
    await signIn(l.page, srv.url, srv.token, { path: 'jobs' });
    const row = rowOf(l.page, slow.job_id);
    await row.waitFor();
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { path: `jobs/${slow.job_id}` });
    const jobPage = p.page;
    const badge = jobPage.locator('.job-summary .badge');
    // Live: the statuses change without a reload (each lasts 1.1 s or more in the sandbox).
    await expect.poll(() => badge.textContent(), { timeout: 15_000 }).toBe('sampling');
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 10_000 }).toBe('sampling');
    expect(await jobPage.locator('dd.job-cost').textContent()).toMatch(/^held \$/);

    await jobPage.getByRole('button', { name: 'Cancel job' }).click();
    const dialog = jobPage.getByRole('dialog', { name: 'Cancel job' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('Cancel this job?');
    await dialog.getByRole('button', { name: 'Cancel job' }).click();
    await expect.poll(() => badge.textContent(), { timeout: 10_000 }).toBe('cancelled');
    await expect.poll(() => jobPage.locator('dd.job-cost').textContent()).toContain('not billed');
    expect(await jobPage.getByRole('button', { name: 'Cancel job' }).count()).toBe(0);
    // The Cancel button is gone: the focus went to the page's heading, not lost to the document.
    await expect.poll(() => jobPage.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    expect((await getJob(srv, slow.job_id)).body.status).toBe('cancelled');
    // The list, untouched since, follows it.
    await expect.poll(() => row.locator('.badge').textContent(), { timeout: 10_000 }).toBe('cancelled');
    expectNoErrors(p);
    expectNoErrors(l);
    await Promise.all([p.context.close(), l.context.close()]);
  });

  it('filters by status, model and day, the filters in the URL surviving a reload; at 375 px the page stays usable', async () => {
    const p = await openPage(browser, { width: 375, height: 812 });
    await signIn(p.page, srv.url, srv.token, { path: 'jobs' });
    const page = p.page;
    await rowOf(page, done.job_id).waitFor();

    await page.getByLabel('Status', { exact: true }).selectOption('failed');
    await page.waitForURL(/\/console\/jobs\?status=failed$/);
    await expect.poll(() => rowOf(page, done.job_id).count()).toBe(0);
    await rowOf(page, failed.job_id).waitFor();
    const statuses = async () => page.locator('tbody .badge').allTextContents();
    expect(new Set(await statuses())).toEqual(new Set(['failed']));

    await page.reload();
    await rowOf(page, failed.job_id).waitFor();
    expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('failed');
    expect(new Set(await statuses())).toEqual(new Set(['failed']));

    // Model and days: today's jobs of the image model; tomorrow has none.
    await page.getByLabel('Status', { exact: true }).selectOption('');
    await page.getByLabel('Model', { exact: true }).selectOption(IMAGE);
    const today = await page.evaluate(() => {
      const d = new Date();
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    });
    await page.getByLabel('From', { exact: true }).fill(today);
    await page.getByLabel('To', { exact: true }).fill(today);
    await page.waitForURL((u) => u.searchParams.get('from') === today && u.searchParams.get('to') === today && u.searchParams.get('model') === IMAGE);
    await rowOf(page, done.job_id).waitFor();
    await rowOf(page, failed.job_id).waitFor();
    await screenshot(page, 'jobs-375');
    // Usable at 375 px: the page does not scroll sideways (only the table's own box may).
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

    const tomorrow = await page.evaluate(() => {
      const d = new Date();
      d.setDate(d.getDate() + 1);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    });
    await page.getByLabel('To', { exact: true }).fill(tomorrow);
    await page.getByLabel('From', { exact: true }).fill(tomorrow);
    await page.getByText('No jobs match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL(/\/console\/jobs$/);
    await rowOf(page, done.job_id).waitFor();
    expectNoErrors(p);
    await p.context.close();
  });

  it('asks before deleting a job, then deletes it and goes back to the list; its page then says it is not found', async () => {
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { path: `jobs/${doomed.job_id}` });
    const page = p.page;
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();

    await page.getByRole('button', { name: 'Delete job' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete job' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await getJob(srv, doomed.job_id)).status).toBe(200);

    await page.getByRole('button', { name: 'Delete job' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${srv.url}/console/jobs`);
    await rowOf(page, done.job_id).waitFor();
    expect(await rowOf(page, doomed.job_id).count()).toBe(0);
    expect((await getJob(srv, doomed.job_id)).status).toBe(404);

    expectNoErrors(p);

    // The API's 404 is the browser's failed load (logged as such); the page says it in words.
    await page.goto(`${srv.url}/console/jobs/${doomed.job_id}`);
    await page.getByRole('heading', { name: 'Job not found' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain(`job '${doomed.job_id}' not found`);
    expect(p.errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await p.context.close();
  });
});
