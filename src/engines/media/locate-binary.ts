import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { parseToolVersion } from './ffmpeg-version.js';
import type { ToolVersion } from './ffmpeg-version.js';

/**
 * Finding ffmpeg and ffprobe: the config's path (`ffmpeg_path`, `ffprobe_path`) when set, else
 * the command on PATH when that build will do (Debian's `ffmpeg` package), else the binary an npm
 * package ships, so `npm ci` alone suffices (docs/decisions.md, issue 32). The automatic choice is
 * made once per process; a failed lookup is not kept, so a later call can succeed once the cause
 * is fixed.
 */
export interface BinarySource {
  /** The command on PATH, e.g. `ffmpeg`. */
  readonly name: string;
  /** Arguments of a quick run on PATH whose stdout tells whether that build will do. */
  readonly probeArgs: readonly string[];
  readonly accepts: (stdout: string) => boolean;
  /** The binary shipped inside an npm package (`{ path }` of `@ffmpeg-installer/ffmpeg`, ...). */
  readonly bundled: () => string;
}

/** Which binary a locator uses, where it came from (never its path: this is shown to anyone) and its version. */
export interface LocatedBinary {
  readonly path: string;
  readonly source: 'config' | 'PATH' | 'bundled';
  readonly version: ToolVersion | undefined;
}

export interface BinaryLocator {
  /** The binary to run: `explicit` if given, else the located one. */
  (explicit?: string): Promise<string>;
  /** The config's path, used before PATH from now on (undefined: locate as usual). */
  configure(path: string | undefined): void;
  /** The binary `locator()` runs, with its version (`-version`, read once). */
  describe(): Promise<LocatedBinary>;
}

function run(cmd: string, args: readonly string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    // Not found: `error`, then `close` with no code. Resolving twice is harmless.
    child.on('error', () => resolve({ code: null, out }));
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function onPathUsable(source: BinarySource): Promise<boolean> {
  const { code, out } = await run(source.name, source.probeArgs);
  return code === 0 && source.accepts(out);
}

/** `{ path }` of a package that ships its binary inside the package (no download at install). */
export function npmBinary(pkg: string, name: string): () => string {
  return () => {
    try {
      return (createRequire(import.meta.url)(pkg) as { path: string }).path;
    } catch (err) {
      // The installer packages throw a bare string on an unsupported platform.
      throw new Error(`no usable ${name}: none on PATH, and ${pkg} failed: ${String(err)}`);
    }
  };
}

export function binaryLocator(source: BinarySource): BinaryLocator {
  let configured: string | undefined;
  let located: Promise<LocatedBinary> | undefined;
  const locate = (): Promise<LocatedBinary> => {
    if (!located) {
      located = (async () => {
        const [path, from] = configured
          ? [configured, 'config' as const]
          : (await onPathUsable(source))
            ? [source.name, 'PATH' as const]
            : [source.bundled(), 'bundled' as const];
        const { code, out } = await run(path, ['-version']);
        if (code === null) throw new Error(`cannot run ${source.name} at ${path}${from === 'config' ? ` (${source.name}_path)` : ''}`);
        return { path, source: from, version: parseToolVersion(out) };
      })();
      located.catch(() => {
        located = undefined;
      });
    }
    return located;
  };
  const locator = (explicit?: string) => (explicit ? Promise.resolve(explicit) : locate().then((l) => l.path));
  return Object.assign(locator, {
    configure(path: string | undefined) {
      if (path === configured) return;
      configured = path;
      located = undefined;
    },
    describe: locate,
  });
}
