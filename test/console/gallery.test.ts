import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../e2e/binary.js';
import { HAVE_BROWSER, expectNoErrors, launchBrowser, openPage, screenshot, signIn, startConsoleServer } from './browser.js';
import type { ConsoleServer } from './browser.js';
import { completedJob, pngDataUri } from './make-jobs.js';
import type { ApiJob } from './make-jobs.js';

const XSS = '<img src=x onerror=alert(1)>';

describe.skipIf(!HAVE_BROWSER)('console: gallery', { timeout: 60_000 }, () => {
  let srv: ConsoleServer;
  let browser: Browser;
  let image: ApiJob;
  let video: ApiJob;
  let audio: ApiJob;
  let model: ApiJob;
  let xss: ApiJob;

  beforeAll(async () => {
    [srv, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
    const input = await pngDataUri();
    // Real media, made at once (--engine-latency-ms 0): the shortest of each kind.
    [image, video, audio, model, xss] = await Promise.all([
      completedJob(srv, 'image/vendor-b/model-b-1', { prompt: 'a red fox in fresh snow', width: 512, height: 512 }),
      completedJob(srv, 'video/vendor-d/model-d-fast', { prompt: 'waves on a beach', duration: 4, aspect_ratio: '1:1', resolution: '720p' }),
      completedJob(srv, 'audio/vendor-l/model-l-1', { prompt: 'soft rain on a tin roof', duration: 2 }),
      completedJob(srv, '3d/vendor-k/model-k-1', { image_url: input, face_limit: 500 }),
      completedJob(srv, 'image/vendor-b/model-b-1', { prompt: XSS, width: 512, height: 512 }),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await cleanup();
  });

  it('shows each kind of output as its tile: a loaded image, a video that plays on hover and focus, an audio player, a 3D model on demand', async () => {
    const p = await openPage(browser);
    const page = p.page;
    await signIn(page, srv.url, srv.token, { path: 'gallery' });
    const tile = (job: ApiJob) => page.locator(`li.tile[data-job-id="${job.job_id}"]`);
    await tile(image).waitFor();

    // Image: loaded, lazily.
    const img = tile(image).locator('img');
    expect(await img.getAttribute('loading')).toBe('lazy');
    await expect.poll(() => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth)).toBe(512);
    expect(await tile(image).getAttribute('data-kind')).toBe('image');

    // Video: its first frame as poster; plays while hovered, pauses on leave; the same by keyboard focus.
    const vid = tile(video).locator('video');
    expect(await vid.getAttribute('src')).toMatch(/\/output\.mp4#t=0\.1$/);
    expect(await vid.getAttribute('preload')).toBe('metadata');
    await vid.hover();
    await expect.poll(() => vid.evaluate((el) => (el as HTMLVideoElement).readyState), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await expect.poll(() => vid.evaluate((el) => !(el as HTMLVideoElement).paused && (el as HTMLVideoElement).currentTime > 0.1), { timeout: 10_000 }).toBe(true);
    await page.mouse.move(0, 0);
    await expect.poll(() => vid.evaluate((el) => (el as HTMLVideoElement).paused)).toBe(true);
    await vid.focus();
    await expect.poll(() => vid.evaluate((el) => (el as HTMLVideoElement).paused)).toBe(false);
    await vid.blur();
    await expect.poll(() => vid.evaluate((el) => (el as HTMLVideoElement).paused)).toBe(true);
    expect(await vid.getAttribute('tabindex')).toBe('0');

    // Audio: a player with controls.
    const aud = tile(audio).locator('audio');
    expect(await aud.getAttribute('controls')).not.toBeNull();
    expect(await aud.getAttribute('src')).toMatch(/\/output\.mp3$/);

    // 3D: the preview first, no viewer loaded; "View in 3D" loads it and shows the model.
    const three = tile(model);
    expect(await three.locator('img').getAttribute('src')).toMatch(/\/preview\.png$/);
    expect(await page.evaluate(() => customElements.get('model-viewer') === undefined)).toBe(true);
    await three.getByRole('button', { name: 'View in 3D' }).click();
    const viewer = three.locator('model-viewer');
    await viewer.waitFor();
    // Preact sets the element's src property (model-viewer does not reflect it to the attribute).
    expect(await viewer.evaluate((el) => (el as HTMLElement & { src: string }).src)).toMatch(/\/model\.glb$/);
    await expect.poll(() => viewer.evaluate((el) => (el as HTMLElement & { loaded?: boolean }).loaded === true), { timeout: 30_000 }).toBe(true);

    // Each tile links to its job.
    for (const job of [image, video, audio, model]) {
      expect(await tile(job).getByRole('link').getAttribute('href')).toBe(`/console/jobs/${job.job_id}`);
    }
    await screenshot(page, 'gallery-1280');

    // The kind filter, kept in the URL.
    await page.getByLabel('Kind', { exact: true }).selectOption('video');
    await page.waitForURL(/\/console\/gallery\?kind=video$/);
    await expect.poll(() => page.locator('li.tile').count()).toBe(1);
    expect(await page.locator('li.tile').getAttribute('data-kind')).toBe('video');
    await page.reload();
    await tile(video).waitFor();
    expect(await page.locator('li.tile').count()).toBe(1);
    expectNoErrors(p);
    await p.context.close();
  });

  it('shows a prompt that looks like HTML as text, never as markup', async () => {
    const p = await openPage(browser);
    const page = p.page;
    await signIn(page, srv.url, srv.token, { path: 'gallery' });
    await page.locator(`li.tile[data-job-id="${xss.job_id}"]`).waitFor();
    expect(await page.locator('img[src="x"]').count()).toBe(0);

    // Its job page shows the prompt in the request, literally; the image's text alternative is the prompt too.
    await page.locator(`li.tile[data-job-id="${xss.job_id}"]`).getByRole('link').click();
    await page.waitForURL(`${srv.url}/console/jobs/${xss.job_id}`);
    const request = page.locator('pre.request-json');
    await request.waitFor();
    expect(await request.textContent()).toContain(JSON.stringify(XSS));
    expect(JSON.parse((await request.textContent())!)).toMatchObject({ prompt: XSS });
    await expect.poll(() => page.getByRole('img', { name: XSS }).count()).toBe(1);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    // The harness records any alert() as an error.
    expectNoErrors(p);
    await p.context.close();
  });

  it('links an output stored outside the service instead of loading it, in the gallery and on its job page', async () => {
    // The API's answers, with the image job's output moved to another origin (as a node app's
    // result may name) under a name with a malformed escape: the page must neither load it (the
    // CSP would refuse it, a logged error) nor fail to decode its name.
    const elsewhere = 'https://files.elsewhere.example/out%E0%A4%A.png';
    const moved = (job: { job_id?: string; result?: { urls?: unknown } }) => {
      if (job.job_id === image.job_id && job.result) job.result.urls = [elsewhere];
    };
    const p = await openPage(browser);
    const page = p.page;
    await page.route(
      (url) => url.pathname === '/jobs' || url.pathname === `/jobs/${image.job_id}/details`,
      async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as { items?: Array<Parameters<typeof moved>[0]>; job?: Parameters<typeof moved>[0] };
        body.items?.forEach(moved);
        if (body.job) moved(body.job);
        await route.fulfill({ response: res, json: body });
      },
    );
    await signIn(page, srv.url, srv.token, { path: 'gallery' });
    const tile = page.locator(`li.tile[data-job-id="${image.job_id}"]`);
    await tile.waitFor();
    expect(await tile.locator('img').count()).toBe(0);
    const open = tile.getByRole('link', { name: 'Open the image' });
    expect(await open.getAttribute('href')).toBe(elsewhere);
    expect(await tile.textContent()).toContain('stored elsewhere, at files.elsewhere.example');

    await tile.getByRole('link', { name: /the job of this image/ }).click();
    await page.getByRole('heading', { name: 'Outputs' }).waitFor();
    const outputs = page.getByRole('region', { name: 'Outputs' });
    const link = outputs.getByRole('link', { name: 'Open out%E0%A4%A.png' });
    expect(await link.getAttribute('href')).toBe(elsewhere);
    expect(await outputs.textContent()).toContain('stored elsewhere, at files.elsewhere.example');
    expect(await outputs.locator('img').count()).toBe(0);
    expectNoErrors(p);
    await p.context.close();
  });

  it('fits a 375 px phone, two tiles a row', async () => {
    const p = await openPage(browser, { width: 375, height: 812, colorScheme: 'dark' });
    const page = p.page;
    await signIn(page, srv.url, srv.token, { path: 'gallery' });
    await page.locator(`li.tile[data-job-id="${image.job_id}"] img`).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    const boxes = await page.locator('li.tile').evaluateAll((els) => els.slice(0, 2).map((e) => e.getBoundingClientRect().top));
    expect(boxes[0]).toBe(boxes[1]);
    await screenshot(page, 'gallery-375');
    expectNoErrors(p);
    await p.context.close();
  });
});
