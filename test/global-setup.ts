import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** End-to-end tests run the compiled `mediagen` binary, so build it once, fresh, before any test. */
export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
