import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * Finding ffmpeg and ffprobe. design.md: "from PATH, else an npm package that ships the binary",
 * so `npm ci` alone suffices. The automatic choice is made once per process; a failed lookup is
 * not kept, so a later call can succeed once the cause is fixed.
 */
export interface BinarySource {
  /** The command on PATH, e.g. `ffmpeg`. */
  readonly name: string;
  /** Arguments of a quick run on PATH whose stdout tells whether that build will do. */
  readonly probeArgs: readonly string[];
  readonly accepts: (stdout: string) => boolean;
  /** An npm package exporting `{ path }` of a binary it ships inside the package. */
  readonly npmPackage: string;
}

function onPathUsable(source: BinarySource): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const child = spawn(source.name, source.probeArgs, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    // Not found: `error`, then `close` with no code. Resolving twice is harmless.
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0 && source.accepts(out)));
  });
}

function bundled(source: BinarySource): string {
  try {
    return (createRequire(import.meta.url)(source.npmPackage) as { path: string }).path;
  } catch (err) {
    // The installer packages throw a bare string on an unsupported platform.
    throw new Error(`no usable ${source.name}: none on PATH, and ${source.npmPackage} failed: ${String(err)}`);
  }
}

/** A locator: `explicit` if given, else the PATH binary when it is accepted, else the npm package's. */
export function binaryLocator(source: BinarySource): (explicit?: string) => Promise<string> {
  let located: Promise<string> | undefined;
  return (explicit) => {
    if (explicit) return Promise.resolve(explicit);
    if (!located) {
      located = onPathUsable(source).then((ok) => (ok ? source.name : bundled(source)));
      located.catch(() => {
        located = undefined;
      });
    }
    return located;
  };
}
