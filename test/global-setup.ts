import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { createPgTemplate } from './pg-template.js';

/**
 * End-to-end tests run the compiled `mediagen` binary, so build it once, fresh, before any test.
 * With TEST_DATABASE_URL, migrate one template database for the run's PostgreSQL test databases.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // MEDIAGEN_SKIP_BUILD: when dist/ was just built (CI: `npm ci` runs `prepare`), or for a quick
  // run of unit files while other parts of the tree are mid-change.
  if (process.env.MEDIAGEN_SKIP_BUILD !== '1') {
    const root = fileURLToPath(new URL('..', import.meta.url));
    // As `npm run build`: the client's types from the OpenAPI document first, then the compile.
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/client-types.ts'], { cwd: root, stdio: 'inherit' });
    const tsc = (...args: string[]) => execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', ...args], { cwd: root, stdio: 'inherit' });
    // The client package first: the server's binary runs its client commands from packages/client/dist.
    tsc('-p', 'packages/client/tsconfig.json');
    tsc('-p', 'tsconfig.build.json');
    // The binary the tests spawn is the bundle made of tsc's output (scripts/bundle.mjs).
    execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: root, stdio: 'inherit' });
    // The web console, which the compiled server serves at /console (test/console/).
    execFileSync(process.execPath, ['node_modules/vite/bin/vite.js', 'build', '--config', 'console/vite.config.ts'], { cwd: root, stdio: 'inherit' });
  }
  // After the build, so a failed build leaves no database behind.
  const template = process.env.TEST_DATABASE_URL ? await createPgTemplate(process.env.TEST_DATABASE_URL) : undefined;
  project.provide('pgTemplate', template?.name);
  return async () => {
    await template?.drop();
  };
}
