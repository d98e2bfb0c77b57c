import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, cleanup, tempDir } from '../e2e/binary.js';
import { DOCS_SCREENSHOT, HAVE_BROWSER, expectNoErrors, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';
import type { ConsolePage, ConsoleServer } from './browser.js';

/**
 * The Playground page (console/src/pages/playground.tsx) in Chromium against `mediagen serve
 * --sandbox`: choosing a model, the form its request schema makes, the price, a job followed to
 * its image, the API's refusals beside their field, deprecated and retired models, and a prompt of
 * markup shown as text. Every control is found by its label or role, as a person finds it.
 */

const B1 = 'image/vendor-b/model-b-1';
const TURBO = 'image/vendor-a/model-a-2/medium-turbo';
const A2 = 'image/vendor-a/model-a-2/medium';
const RETIRED = 'image/vendor-g/model-g-3';
/** Deprecated by the server's config, its sunset far off: listed, runnable, marked. */
const SUNSET = '2099-01-01';

/**
 * A refusal the test asks for on purpose (a 400, a 402), which Chromium logs as a failed load:
 * taken out of the page's errors, as sign-in.test.ts does for its refused token. Nothing else is.
 */
function dropExpectedRefusals(p: ConsolePage, status: number): void {
  const kept = p.errors.filter((e) => !e.includes(`Failed to load resource: the server responded with a status of ${status}`));
  p.errors.length = 0;
  p.errors.push(...kept);
}

/** The text of the elements a control's aria-describedby names. */
async function description(control: Locator): Promise<string> {
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean);
  const texts = await Promise.all(ids.map((id) => control.page().locator(`[id="${id}"]`).textContent()));
  return texts.join(' ');
}

/** Follows the result panel until the job ends, recording each progress value and status seen. */
async function followJob(page: Page): Promise<{ values: number[]; statuses: string[]; final: string }> {
  const bar = page.getByRole('progressbar', { name: /Job progress/ });
  const badge = page.locator('.pg-run-head .badge');
  const values: number[] = [];
  const statuses: string[] = [];
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = (await badge.textContent({ timeout: 10_000 }))?.trim() ?? '';
    if (status && statuses.at(-1) !== status) statuses.push(status);
    if ((await bar.count()) > 0) {
      // The bar goes when the job ends, maybe between the count and this read: then there is no value.
      const read = await bar.getAttribute('aria-valuenow', { timeout: 1_000 }).catch(() => null);
      const now = Number(read);
      if (read !== null && values.at(-1) !== now) values.push(now);
    }
    if (['completed', 'failed', 'cancelled'].includes(status)) return { values, statuses, final: status };
    if (Date.now() > deadline) throw new Error(`the job did not end; statuses seen: ${statuses.join(', ')}`);
    await page.waitForTimeout(150);
  }
}

describe.skipIf(!HAVE_BROWSER)('console: the playground', { timeout: 60_000 }, () => {
  let srv: ConsoleServer;
  let browser: Browser;
  let models: Array<{ id: string; kind: string }>;
  beforeAll(async () => {
    const dir = tempDir('mediagen-playground-');
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ deprecations: [{ model: TURBO, sunset_date: SUNSET, replacement: A2 }] }));
    [srv, browser] = await Promise.all([startConsoleServer({ args: ['--config', config] }), launchBrowser()]);
    models = ((await (await fetch(`${srv.url}/models`)).json()) as { items: Array<{ id: string; kind: string }> }).items;
  });
  afterAll(async () => {
    await browser?.close();
    await cleanup();
  });

  it('filters the models by kind and name, keeps the choice in the URL, prices the form exactly, runs it to an image shown inline, and finds that job in the jobs list and the gallery', async () => {
    const p = await openPage(browser);
    const { page } = p;
    await signIn(page, srv.url, srv.token, { path: 'playground' });
    const radios = page.getByRole('radiogroup', { name: 'Model' }).getByRole('radio');
    await expect.poll(() => radios.count()).toBe(models.length);

    // The kind narrows the list to exactly that kind's models.
    await page.getByLabel('Kind').selectOption({ label: 'Video' });
    const videos = models.filter((m) => m.kind === 'video').map((m) => m.id);
    expect(videos.length).toBeGreaterThan(0);
    expect(videos.length).toBeLessThan(models.length);
    await expect.poll(() => radios.count()).toBe(videos.length);
    expect(await radios.evaluateAll((els) => els.map((el) => el.getAttribute('value')))).toEqual(videos);
    await page.getByLabel('Kind').selectOption({ label: 'All kinds' });

    // The search by name; choosing puts the model in the URL, and a reload keeps it.
    await page.getByLabel('Search models').fill('model-b-1');
    await expect.poll(() => radios.count()).toBe(1);
    await page.getByRole('radio', { name: B1, exact: true }).check();
    await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe(B1);
    await page.reload();
    await page.getByRole('heading', { name: B1, exact: true }).waitFor();
    expect(await page.getByRole('radio', { name: B1, exact: true }).isChecked()).toBe(true);

    // The form from the schema: defaults in, bounded numbers as a slider and a number on one value.
    const prompt = page.getByLabel('Prompt', { exact: true });
    expect(await prompt.evaluate((el) => el.tagName)).toBe('TEXTAREA');
    expect(await prompt.getAttribute('aria-describedby')).toBeTruthy();
    expect(await description(prompt)).toContain('Text describing the image');
    const width = page.getByRole('spinbutton', { name: 'Width', exact: true });
    const widthSlider = page.getByRole('slider', { name: 'Width', exact: true });
    expect(await width.inputValue()).toBe('1024');
    expect(await widthSlider.inputValue()).toBe('1024');
    await width.fill('768');
    expect(await widthSlider.inputValue()).toBe('768');
    expect(await page.getByLabel('Mode', { exact: true }).inputValue()).not.toBe('');
    expect(await page.getByRole('combobox', { name: 'Mode', exact: true }).locator('option:checked').textContent()).toBe('standard');

    // The price: none until the required prompt is there, then the quote, exact to the micro-dollar
    // (the model's standard rate is $0.040400), again as the form changes.
    const price = page.locator('.pg-price');
    await expect.poll(() => price.textContent()).toContain('Complete the form to see the price');
    await prompt.fill('a lighthouse at dusk');
    await expect.poll(() => price.textContent()).toBe('Estimated price: $0.0404');
    // While the new price is asked for (held here), the old one is not shown as the form's.
    let releaseQuote = () => undefined as void;
    const held = new Promise<void>((resolve) => (releaseQuote = resolve));
    const isQuote = (url: URL) => url.pathname.endsWith('/quote');
    await page.route(isQuote, async (route) => {
      await held;
      await route.fallback();
    });
    await page.getByLabel('Mode', { exact: true }).selectOption('max');
    await expect.poll(() => price.textContent()).toBe('Estimating the price…');
    releaseQuote();
    await expect.poll(() => price.textContent()).toBe('Estimated price: $0.10');
    await page.unroute(isQuote);
    await page.getByLabel('Mode', { exact: true }).selectOption('standard');
    await expect.poll(() => price.textContent()).toBe('Estimated price: $0.0404');

    const balance = page.getByLabel('Available', { exact: true });
    expect(await balance.textContent()).toBe('$10.00');
    await page.getByRole('button', { name: 'Generate' }).click();
    const run = await followJob(page);
    expect(run.final).toBe('completed');
    // A determinate bar that only grows, through several steps, to full.
    expect(run.values.length).toBeGreaterThanOrEqual(3);
    expect(run.values).toEqual([...run.values].sort((a, b) => a - b));
    expect(run.values.at(-1)).toBe(100);
    expect(run.statuses).toContain('sampling');

    // The image inline, loaded, from the server's own /outputs/; the job's page linked.
    const img = page.locator('.pg-result figure img');
    await img.waitFor();
    await expect.poll(() => img.evaluate((el) => (el as unknown as { complete: boolean; naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    expect(await img.getAttribute('src')).toMatch(new RegExp(`^${srv.url}/outputs/`));
    const jobLink = page.getByRole('link', { name: /^Job [0-9a-f]{8}/ });
    expect(await jobLink.getAttribute('href')).toMatch(/^\/console\/jobs\/[0-9a-f-]{36}$/);
    // The header's balance after the charge, to the micro-dollar: $10 less $0.0404.
    await expect.poll(() => balance.textContent()).toBe('$9.9596');

    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await screenshot(page, 'playground-1280');
    // The README's picture (docs/console.md): the page's top after a run, the form beside its image.
    if (DOCS_SCREENSHOT) await page.screenshot({ path: DOCS_SCREENSHOT, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1100 } });

    // The job run here is in the jobs list and in the gallery, reached by the navigation.
    const jobId = (await jobLink.getAttribute('href'))!.split('/').pop()!;
    const src = await img.getAttribute('src');
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'Jobs' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: `Job ${jobId}` }) });
    await row.waitFor();
    expect(await row.textContent()).toContain('completed');
    expect(await row.textContent()).toContain(B1);
    await nav.getByRole('link', { name: 'Gallery' }).click();
    const tileImg = page.locator(`li.tile[data-job-id="${jobId}"] img`);
    await tileImg.waitFor();
    await expect.poll(() => tileImg.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth)).toBe(768);
    expect(await tileImg.getAttribute('src')).toBe(src);
    expectNoErrors(p);
    await p.context.close();
  });

  it("shows the API's refusal beside the field it names, and a failed job's error code and message", async () => {
    const p = await openPage(browser);
    const { page } = p;
    await signIn(page, srv.url, srv.token, { path: `playground?model=${B1}` });
    await page.getByLabel('Prompt', { exact: true }).fill('a red fox');
    // Out of bounds: the form does not stop it (noValidate), the API refuses it.
    const width = page.getByRole('spinbutton', { name: 'Width', exact: true });
    await width.fill('99999');
    expect(await page.getByRole('slider', { name: 'Width', exact: true }).inputValue()).toBe('8192');
    // No price for a value out of its bounds: quietly, no error yet.
    await expect.poll(() => page.locator('.pg-price').textContent()).toContain('Complete the form to see the price');
    await page.getByRole('button', { name: 'Generate' }).click();
    await expect.poll(() => width.getAttribute('aria-invalid')).toBe('true');
    expect(await description(width)).toContain("'width' must be <= 8192");
    // Beside the field, not in a general alert; the field has the focus.
    expect(await page.locator('.pg-general [role="alert"]').count()).toBe(0);
    expect(await width.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);
    expect(await page.locator('.pg-result .pg-run').count()).toBe(0);
    // Editing the field clears its error.
    await width.fill('1024');
    expect(await width.getAttribute('aria-invalid')).toBeNull();

    // A refusal naming a field the form does not have goes above the submit button: none here, so
    // a failed job instead, which the sandbox makes on request.
    await page.getByLabel('Prompt', { exact: true }).fill('a red fox [mediagen:fail=engine_failed]');
    await page.getByRole('button', { name: 'Generate' }).click();
    expect((await followJob(page)).final).toBe('failed');
    const alert = page.locator('.pg-result [role="alert"]');
    expect(await alert.textContent()).toContain('engine_failed');
    expect(await alert.textContent()).toContain('the engine failed unexpectedly');

    // Looking at another model keeps the last run in view, saying which model ran it.
    await page.getByRole('radio', { name: A2, exact: true }).check();
    await expect.poll(() => page.locator('.pg-run-model').textContent()).toBe(`Run with ${B1}, the model chosen before.`);
    expect(await alert.textContent()).toContain('engine_failed');

    dropExpectedRefusals(p, 400);
    expectNoErrors(p);
    await p.context.close();
  });

  it("shows a refusal that names no field (402, no balance) above the submit button, in the API's words", async () => {
    await adminJson(srv.dataDir, ['workspace', 'create', '--name', 'empty', '--owner', 'empty@localhost']);
    const made = await adminJson<{ token: string }>(srv.dataDir, ['token', 'create', '--workspace', 'empty', '--name', 'console', '--as', 'empty@localhost']);
    const p = await openPage(browser);
    const { page } = p;
    await signIn(page, srv.url, made.token, { path: `playground?model=${B1}` });
    await page.getByLabel('Prompt', { exact: true }).fill('a red fox');
    await page.getByRole('button', { name: 'Generate' }).click();
    const alert = page.locator('.pg-general [role="alert"]');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^Not enough balance: insufficient API balance: this request costs \$0\.040400/);
    expect(await alert.textContent()).toContain('mediagen admin balance add');
    // Not pinned on a field, and no job.
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    expect(await page.locator('.pg-result .pg-run').count()).toBe(0);
    // The alert takes the focus, so a keyboard or screen reader user hears it.
    expect(await page.locator('.pg-general').evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);

    dropExpectedRefusals(p, 402);
    expectNoErrors(p);
    await p.context.close();
  });

  it('marks a deprecated model with its sunset and replacement, selects the replacement, uploads a file into a URL field, prices a metered model at most, and shows a retired model without a form', async () => {
    const p = await openPage(browser);
    const { page } = p;
    await signIn(page, srv.url, srv.token, { path: 'playground' });
    const turbo = page.getByRole('radio', { name: TURBO, exact: true });
    expect(await description(turbo)).toContain(`Deprecated: sunset ${SUNSET}`);
    // Its replacement is in the list too, before it is chosen.
    expect(await description(turbo)).toContain(`Replaced by ${A2}.`);
    await turbo.check();
    const notice = page.locator('.pg-deprecation');
    await notice.waitFor();
    expect(await notice.textContent()).toContain(SUNSET);
    expect(await notice.textContent()).toContain(A2);
    // Still runnable until its sunset.
    expect(await page.getByRole('button', { name: 'Generate' }).count()).toBe(1);
    await page.getByRole('button', { name: `Use ${A2} instead` }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe(A2);
    expect(await page.getByRole('radio', { name: A2, exact: true }).isChecked()).toBe(true);

    // The list by keyboard: the arrow keys move the choice, as radio buttons do.
    expect(models[0]!.id).toBe(A2);
    await page.getByRole('radio', { name: A2, exact: true }).focus();
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe(models[1]!.id);
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe(A2);

    // A media URL field takes a URL or an upload, which puts the asset's URL in it.
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#3366cc' } }).png().toBuffer();
    await page.getByLabel('Upload a file for Image URL').setInputFiles({ name: 'input.png', mimeType: 'image/png', buffer: png });
    const imageUrl = page.getByRole('textbox', { name: 'Image URL', exact: true });
    await expect.poll(() => imageUrl.inputValue()).toMatch(new RegExp(`^${srv.url}/assets/files/[^/]+/[^/]+\\.png$`));
    expect(await page.getByRole('status').filter({ hasText: 'Uploaded input.png' }).count()).toBe(1);
    // The required choice with no default asks for a choice; the price waits for it.
    expect(await page.getByLabel('Aspect ratio', { exact: true }).inputValue()).toBe('');
    await page.getByLabel('Prompt', { exact: true }).fill('a lighthouse');
    await expect.poll(() => page.locator('.pg-price').textContent()).toContain('Complete the form');
    await page.getByLabel('Aspect ratio', { exact: true }).selectOption('16:9');
    await expect.poll(() => page.locator('.pg-price').textContent()).toBe('Estimated price: $0.03');

    // A metered model's price is the most it can cost; a quote the API refuses (here two fields
    // that exclude each other, which the form cannot see) is not an error, only no price yet.
    await page.getByRole('radio', { name: 'enhance/vendor-j/video-upscale', exact: true }).check();
    await page.getByRole('textbox', { name: 'Video URL', exact: true }).fill('https://media.example/clip.mp4');
    await expect.poll(() => page.locator('.pg-price').textContent()).toBe('Estimated price: at most $2.40 (charged for what the job makes)');
    await page.getByLabel('Upscale factor', { exact: true }).selectOption('4');
    await page.getByLabel('Resolution', { exact: true }).selectOption('720p');
    await expect.poll(() => page.locator('.pg-price').textContent()).toContain('Complete the form to see the price');
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    await page.getByLabel('Resolution', { exact: true }).selectOption({ label: 'Not set' });
    await expect.poll(() => page.locator('.pg-price').textContent()).toBe('Estimated price: at most $4.80 (charged for what the job makes)');

    // Retired: listed and marked, described, but no form to run.
    await page.getByLabel('Search models').fill('model-g-3');
    const retired = page.getByRole('radio', { name: RETIRED, exact: true });
    expect(await description(retired)).toContain('Retired');
    await retired.check();
    await expect.poll(() => page.locator('.pg-deprecation').textContent()).toContain('cannot be run');
    expect(await page.getByRole('button', { name: 'Generate' }).count()).toBe(0);
    expect(await page.locator('.pg-result').textContent()).toContain('This model cannot be run');

    // The refused quote, which Chromium logged as a failed load.
    dropExpectedRefusals(p, 400);
    expectNoErrors(p);
    await p.context.close();
  });

  it('at 375 px: one column, and a prompt of markup shown as text, never as HTML', async () => {
    const p = await openPage(browser, { width: 375, height: 812 });
    const { page } = p;
    await signIn(page, srv.url, srv.token, { path: `playground?model=${B1}` });
    const xss = '<img src=x onerror=alert(1)>';
    await page.getByLabel('Prompt', { exact: true }).fill(xss);
    await page.getByRole('button', { name: 'Generate' }).click();
    expect((await followJob(page)).final).toBe('completed');
    // The prompt literally, as text; no element made of it (a dialog would be a recorded error).
    expect(await page.locator('.pg-prompt-text').textContent()).toBe(xss);
    expect(await page.getByText(xss, { exact: true }).count()).toBeGreaterThan(0);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator('img').evaluateAll((els) => els.map((el) => el.getAttribute('src')).filter((s) => !s?.startsWith('http')))).toEqual([]);

    // One column: the result under the form, nothing wider than the screen.
    const form = await page.locator('.pg-main > section').first().boundingBox();
    const result = await page.locator('.pg-result').boundingBox();
    expect(result!.y).toBeGreaterThanOrEqual(form!.y + form!.height - 1);
    expect(Math.abs(result!.x - form!.x)).toBeLessThan(1);
    expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await screenshot(page, 'playground-375');
    expectNoErrors(p);
    await p.context.close();
  });
});
