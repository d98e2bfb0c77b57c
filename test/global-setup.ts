import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** End-to-end tests run the compiled `mediagen` binary, so build it once, fresh, before any test. */
export default function setup(): void {
  // For a quick run of unit files while other parts of the tree are mid-change.
  if (process.env.MEDIAGEN_SKIP_BUILD === '1') return;
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
