import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, cleanup } from '../e2e/binary.js';
import { HAVE_BROWSER, expectNoErrors, launchBrowser, openPage, signIn, startConsoleServer, unlabelledControls } from './browser.js';
import { completedJob } from './make-jobs.js';
import { TOKEN_CACHE_TTL_MS } from '../../src/services/identity/token-cache.js';
import type { ConsoleServer } from './browser.js';

/** The budget for the first load: at most 200 KB of gzipped JavaScript. */
const FIRST_LOAD_JS_GZIP_BYTES = 200 * 1024;

describe.skipIf(!HAVE_BROWSER)('console: serving and signing in', { timeout: 60_000 }, () => {
  let srv: ConsoleServer;
  let browser: Browser;
  beforeAll(async () => {
    [srv, browser] = await Promise.all([startConsoleServer(), launchBrowser()]);
  });
  afterAll(async () => {
    await browser?.close();
    await cleanup();
  });

  it('serves the console at /console with a Content-Security-Policy that admits no inline script, and every page path answers the app', async () => {
    const res = await fetch(`${srv.url}/console/jobs/some-job`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval'");
    expect(csp).not.toMatch(/'unsafe-inline'|'unsafe-eval'/);
    // model-viewer's shadow-root style, by its hash from the build.
    expect(csp).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await res.text();
    // Every script is a file of the server's: none inline.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\ssrc="\/console\/assets\/[^"]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect((await fetch(`${srv.url}/console`, { redirect: 'manual' })).headers.get('location')).toBe('/console/');
    const missing = await fetch(`${srv.url}/console/assets/no-such-chunk.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: expect.stringContaining('no console file') });
  });

  it('loads at most 200 KB of gzipped JavaScript before the first page shows', async () => {
    const html = await (await fetch(`${srv.url}/console/`)).text();
    const entry = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(entry.length).toBeGreaterThan(0);
    let total = 0;
    for (const path of entry) {
      const res = await fetch(`${srv.url}${path}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toContain('immutable');
      total += gzipSync(Buffer.from(await res.arrayBuffer())).length;
    }
    expect(total).toBeLessThanOrEqual(FIRST_LOAD_JS_GZIP_BYTES);
  });

  it("refuses a wrong token with the API's message, then signs in, keeping the token in sessionStorage only", async () => {
    const p = await openPage(browser);
    await p.page.goto(`${srv.url}/console/`);
    await p.page.getByLabel('API token').fill('mg_not-a-real-token');
    await p.page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => p.page.getByRole('alert').textContent()).toContain('invalid API token');
    // The refused sign-in's 401 is the API's answer, which the browser logs as a failed load.
    p.errors.length = 0;

    await p.page.getByLabel('API token').fill(srv.token);
    await p.page.getByRole('button', { name: 'Sign in' }).click();
    await p.page.getByRole('navigation', { name: 'Console' }).waitFor();
    // The console's root moves to the playground in an effect after its first render, which shows the navigation already.
    await p.page.waitForURL(`${srv.url}/console/playground`);
    expect(p.page.url()).not.toContain(srv.token);
    const stored = await p.page.evaluate(() => ({ session: { ...sessionStorage }, local: { ...localStorage }, cookie: document.cookie }));
    expect(Object.values(stored.session)).toEqual([srv.token]);
    expect(stored.local).toEqual({});
    expect(stored.cookie).toBe('');

    // A reload keeps the session (the tab's storage); signing out forgets it.
    await p.page.reload();
    await p.page.getByRole('navigation', { name: 'Console' }).waitFor();
    await p.page.getByRole('button', { name: 'Sign out' }).click();
    await p.page.getByLabel('API token').waitFor();
    expect(await p.page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
    expectNoErrors(p);
    await p.context.close();
  });

  it('remembers the token in localStorage only when asked', async () => {
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { remember: true });
    const stored = await p.page.evaluate(() => ({ session: sessionStorage.length, local: Object.values({ ...localStorage }) }));
    expect(stored).toEqual({ session: 0, local: [srv.token] });
    // A new tab of the same browser profile is signed in.
    const other = await p.context.newPage();
    await other.goto(`${srv.url}/console/jobs`);
    await other.getByRole('navigation', { name: 'Console' }).waitFor();
    expectNoErrors(p);
    await p.context.close();
  });

  it('keeps a remembered token when the server cannot be reached at load, says so, and signs in on Try again', async () => {
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { remember: true });
    // No answer at all to GET /workspace, then a 500: neither says anything about the token.
    const isWorkspace = (url: URL) => url.pathname === '/workspace';
    await p.page.route(isWorkspace, (route) => route.abort());
    await p.page.reload();
    const alert = p.page.getByRole('alert');
    await expect.poll(() => alert.textContent(), { timeout: 15_000 }).toContain('The server could not be reached');
    expect(await p.page.evaluate(() => Object.values({ ...localStorage }))).toEqual([srv.token]);
    await p.page.unroute(isWorkspace);
    await p.page.route(isWorkspace, (route) => route.fulfill({ status: 500, json: { error: 'the database is not answering' } }));
    await p.page.getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => alert.textContent()).toContain('the database is not answering');
    expect(await p.page.evaluate(() => Object.values({ ...localStorage }))).toEqual([srv.token]);

    // The server answers again: Try again signs in with the kept token.
    await p.page.unroute(isWorkspace);
    await p.page.getByRole('button', { name: 'Try again' }).click();
    await p.page.getByRole('navigation', { name: 'Console' }).waitFor();
    // The refused loads above, which Chromium logs; nothing else.
    expect(p.errors.filter((e) => !/net::ERR_FAILED|status of 500/.test(e))).toEqual([]);
    await p.context.close();
  });

  it("does not let a late 401 to a previous session's token sign out the session that followed", async () => {
    const made = await adminJson<{ token: string }>(srv.dataDir, ['token', 'create', '--workspace', 'default', '--name', 'second', '--as', 'owner@localhost']);
    const p = await openPage(browser);
    await signIn(p.page, srv.url, srv.token, { path: 'jobs' });
    // The first session's next GET /workspace (the Usage page reads the balance) is held; it
    // answers 401 only once a second session, with another token, has begun.
    let answer = () => undefined as void;
    const late = new Promise<void>((resolve) => (answer = resolve));
    await p.page.route(
      (url) => url.pathname === '/workspace',
      async (route) => {
        if (route.request().headers()['authorization'] !== `Bearer ${srv.token}`) return route.fallback();
        await late;
        await route.fulfill({ status: 401, json: { error: 'this API token has been revoked' } });
      },
    );
    await p.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Usage' }).click();
    await p.page.getByRole('heading', { name: 'Usage' }).waitFor();
    // Out and in again in the same page (no reload, which would drop the held request).
    await p.page.getByRole('button', { name: 'Sign out' }).click();
    await p.page.getByLabel('API token').fill(made.token);
    await p.page.getByRole('button', { name: 'Sign in' }).click();
    await p.page.getByRole('navigation', { name: 'Console' }).waitFor();
    const refused = p.page.waitForResponse((res) => res.status() === 401);
    answer();
    await refused;
    // A moment for the answer to reach the page's code: the second session stays.
    await p.page.waitForTimeout(300);
    expect(await p.page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(true);
    expect(await p.page.evaluate(() => Object.values({ ...sessionStorage }))).toEqual([made.token]);
    expect(p.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    await p.context.close();
  });

  it("sends a user whose token is revoked back to sign-in with the API's message", async () => {
    const made = await adminJson<{ token: string; token_id: string }>(srv.dataDir, ['token', 'create', '--workspace', 'default', '--name', 'to revoke', '--as', 'owner@localhost']);
    const p = await openPage(browser);
    await signIn(p.page, srv.url, made.token);
    await adminJson(srv.dataDir, ['token', 'revoke', '--workspace', 'default', '--token-id', made.token_id, '--as', 'owner@localhost']);
    // Another process's change reaches the server within the token cache's life (token-cache.ts).
    await new Promise((resolve) => setTimeout(resolve, TOKEN_CACHE_TTL_MS + 50));
    await p.page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Jobs' }).click();
    await expect.poll(() => p.page.getByRole('alert').textContent(), { timeout: 15_000 }).toContain('revoked');
    await p.page.getByLabel('API token').waitFor();
    expect(await p.page.evaluate(() => sessionStorage.length)).toBe(0);
    await p.context.close();
  });

  it('is usable by keyboard alone: sign in, skip to the content, and move between pages by the navigation', async () => {
    const p = await openPage(browser);
    await p.page.goto(`${srv.url}/console/`);
    await p.page.keyboard.press('Tab');
    expect(await p.page.evaluate(() => [...((document.activeElement as HTMLInputElement | null)?.labels ?? [])].map((l) => l.textContent?.trim()))).toEqual(['API token']);
    await p.page.keyboard.type(srv.token);
    await p.page.keyboard.press('Tab');
    await p.page.keyboard.press('Tab');
    expect(await p.page.evaluate(() => document.activeElement?.textContent)).toBe('Sign in');
    await p.page.keyboard.press('Enter');
    await p.page.getByRole('navigation', { name: 'Console' }).waitFor();
    // The first stop is the skip link, which moves focus past the header.
    await p.page.keyboard.press('Tab');
    expect(await p.page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await p.page.keyboard.press('Enter');
    expect(await p.page.evaluate(() => document.activeElement?.id)).toBe('main');
    // Back to the navigation, to its Jobs link, by Tab alone.
    await p.page.keyboard.press('Shift+Tab');
    for (let i = 0; i < 12 && (await p.page.evaluate(() => document.activeElement?.textContent)) !== 'Jobs'; i++) await p.page.keyboard.press('Shift+Tab');
    expect(await p.page.evaluate(() => document.activeElement?.textContent)).toBe('Jobs');
    await p.page.keyboard.press('Enter');
    await p.page.waitForURL(`${srv.url}/console/jobs`);
    expectNoErrors(p);
    await p.context.close();
  });

  it('names every control on every page, on a phone and on a desktop', { timeout: 90_000 }, async () => {
    const job = await completedJob(srv, 'image/vendor-b/model-b-1', { prompt: 'a quiet harbour', width: 512, height: 512 });
    for (const width of [375, 1280]) {
      const p = await openPage(browser, { width, colorScheme: width === 375 ? 'dark' : 'light' });
      await signIn(p.page, srv.url, srv.token);
      // Every page of the navigation in sight, none behind a sideways scroll.
      const rights = await p.page.getByRole('navigation', { name: 'Console' }).getByRole('link').evaluateAll((els) => els.map((el) => el.getBoundingClientRect().right));
      expect(rights.length).toBeGreaterThanOrEqual(5);
      for (const right of rights) expect(right, `a navigation link at ${width} px`).toBeLessThanOrEqual(width);
      for (const path of ['playground?model=image/vendor-b/model-b-1', 'jobs', `jobs/${job.job_id}`, 'gallery', 'usage', 'workspace']) {
        await p.page.goto(`${srv.url}/console/${path}`);
        await p.page.getByRole('heading', { level: 1 }).first().waitFor();
        await p.page.waitForLoadState('networkidle');
        expect(await unlabelledControls(p.page), `${path} at ${width} px`).toEqual([]);
        // Nothing wider than the screen: the page never scrolls sideways.
        expect(await p.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${path} at ${width} px`).toBe(true);
      }
      expectNoErrors(p);
      await p.context.close();
    }
  });
});
