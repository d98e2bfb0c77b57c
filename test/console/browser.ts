/**
 * The console's browser tests: Debian's Chromium (`/usr/bin/chromium`, or CHROMIUM_PATH) driven by
 * playwright-core, against the compiled `mediagen serve` (test/e2e/binary.ts) and the console that
 * `npm run build` put in dist/console. Pages are found by role and label, as a person finds them.
 *
 * Without a Chromium the suite is skipped, unless MEDIAGEN_REQUIRE_BROWSER=1 (.ci/run sets it after
 * installing the package), where a missing browser fails the run.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { startServer, tempDir } from '../e2e/binary.js';
import type { Server } from '../e2e/binary.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const REQUIRED = process.env.MEDIAGEN_REQUIRE_BROWSER === '1';

if (REQUIRED && !existsSync(CHROMIUM)) {
  throw new Error(`MEDIAGEN_REQUIRE_BROWSER is set but there is no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
}

/** False skips the browser suite: no Chromium here and none required. */
export const HAVE_BROWSER = existsSync(CHROMIUM);

/** Where screenshots go: the test run's artifacts (gitignored), or MEDIAGEN_TEST_ARTIFACTS. */
export const ARTIFACTS = process.env.MEDIAGEN_TEST_ARTIFACTS ?? fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

/**
 * With MEDIAGEN_DOCS_SCREENSHOT=1 the README's screenshot (docs/console.png) is taken again;
 * otherwise docs/ is left alone, so a test run never dirties the tree.
 */
export const DOCS_SCREENSHOT = process.env.MEDIAGEN_DOCS_SCREENSHOT === '1' ? fileURLToPath(new URL('../../docs/console.png', import.meta.url)) : undefined;

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Chromium as the machine's probe runs it: headless, as root without the sandbox, and without the
 * background connections a closed network refuses.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface ConsoleServer {
  readonly server: Server;
  readonly url: string;
  /** The bootstrap owner's token, printed at first start. */
  readonly token: string;
  readonly dataDir: string;
}

/**
 * `mediagen serve --sandbox` on a fresh data dir, plus `args`: the sandbox's `[mediagen:delay=ms]`
 * marker gives a job slow enough to cancel from the browser; every other job renders real media at once.
 */
export async function startConsoleServer(opts: { args?: readonly string[] } = {}): Promise<ConsoleServer> {
  const dataDir = tempDir('mediagen-console-');
  const server = await startServer(['--sandbox', '--port', '0', '--engine-latency-ms', '0', '--data-dir', dataDir, ...(opts.args ?? [])]);
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return { server, url: server.url, token: token!, dataDir };
}

export interface ConsolePage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Everything the page wrote to its console at error level, uncaught errors and CSP violations included. */
  readonly errors: string[];
}

/** A fresh browser context (its own storage) at `width` x `height`, collecting console errors. */
export async function openPage(browser: Browser, opts: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<ConsolePage> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 },
    colorScheme: opts.colorScheme ?? 'light',
    reducedMotion: 'reduce',
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(`uncaught: ${err.message}`));
  page.on('dialog', (d) => {
    errors.push(`unexpected ${d.type()} dialog: ${d.message()}`);
    void d.dismiss();
  });
  return { page, context, errors };
}

/** Signs in through the form, as a person would, and waits for the signed-in frame. */
export async function signIn(page: Page, url: string, token: string, opts: { remember?: boolean; path?: string } = {}): Promise<void> {
  await page.goto(`${url}/console/${opts.path ?? ''}`);
  await page.getByLabel('API token').fill(token);
  if (opts.remember) await page.getByLabel('Remember me on this browser').check();
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(true);
}

/** No console errors, no uncaught exceptions, no CSP violations. */
export function expectNoErrors(p: ConsolePage): void {
  expect(p.errors).toEqual([]);
}

/**
 * Every control on the page has an accessible name: a form field by its label (or aria-label /
 * aria-labelledby), a button or link by its text or aria-label. Answers the controls that have none.
 */
export function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const named = (el: Element): boolean => {
      const aria = el.getAttribute('aria-label')?.trim();
      if (aria) return true;
      const by = el.getAttribute('aria-labelledby');
      if (by && by.split(/\s+/).some((id) => document.getElementById(id)?.textContent?.trim())) return true;
      if ((el as HTMLInputElement).labels?.length) return [...(el as HTMLInputElement).labels!].some((l) => l.textContent?.trim());
      if (el.matches('button, a, summary, [role="button"]')) return Boolean(el.textContent?.trim() || el.querySelector('img[alt]:not([alt=""])'));
      return Boolean(el.getAttribute('title')?.trim());
    };
    const visible = (el: Element) => (el as HTMLElement).offsetParent !== null || el.matches('dialog *');
    return [...document.querySelectorAll('input:not([type="hidden"]), select, textarea, button, a[href], summary, [role="button"]')]
      .filter((el) => visible(el) && !named(el))
      .map((el) => el.outerHTML.slice(0, 160));
  });
}
