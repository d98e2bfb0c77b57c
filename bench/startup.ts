/**
 * `npm run bench:startup`: how long the `mediagen` binary takes to start, bundled (dist/main.js,
 * scripts/bundle.mjs) against tsc's unbundled output (dist/cli/*.js) in the same run. Both load the
 * same compiled code; only the module files differ. Run after `npm run build`.
 *
 * Two commands, alternated so both sides see the same machine: `admin workspace list` to its exit,
 * and `serve` to its first stdout line ("mediagen: serving ..."). Prints medians and the ratio.
 *
 *   BENCH_STARTUP_RUNS   runs per command and side (default 15)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);

type Side = 'bundled' | 'unbundled';

/** The node arguments that run `mediagen <command> ...args` on one side. */
function argv(side: Side, command: 'admin' | 'serve', args: string[]): string[] {
  if (side === 'bundled') return [join(ROOT, 'dist', 'main.js'), command, ...args];
  const module = join(ROOT, 'dist', 'cli', `${command}.js`);
  return ['--input-type=module', '-e', `const m = await import(${JSON.stringify(module)}); await m.${command}(process.argv.slice(1));`, '--', ...args];
}

/** Milliseconds from spawn until `done` says so (or the process exits). */
function time(args: string[], done?: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
    let out = '';
    let err = '';
    let took: number | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (done && took === undefined && done.test(out)) {
        took = performance.now() - start;
        child.kill('SIGTERM');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('exit', (code) => {
      if (took !== undefined) return resolve(took);
      if (!done && code === 0) return resolve(performance.now() - start);
      reject(new Error(`${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`));
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'mediagen-bench-startup-'));
try {
  // A store to list: the first admin run creates it.
  await time(argv('bundled', 'admin', ['workspace', 'create', '--name', 'bench', '--owner', 'bench@localhost', '--data-dir', dir]));
  const commands = [
    { name: 'admin workspace list', command: 'admin' as const, args: ['workspace', 'list', '--data-dir', dir], done: undefined },
    { name: 'serve (first line)', command: 'serve' as const, args: ['--port', '0', '--data-dir', dir], done: /^mediagen: serving /m },
  ];
  console.log(`mediagen bench:startup: ${RUNS} runs per command and side, alternated\n`);
  console.log('command                 unbundled ms  bundled ms  unbundled/bundled');
  for (const c of commands) {
    const samples: Record<Side, number[]> = { bundled: [], unbundled: [] };
    // One warm-up each (the page cache), then alternate.
    for (const side of ['unbundled', 'bundled'] as const) await time(argv(side, c.command, c.args), c.done);
    for (let i = 0; i < RUNS; i++) {
      for (const side of i % 2 ? (['bundled', 'unbundled'] as const) : (['unbundled', 'bundled'] as const)) {
        samples[side].push(await time(argv(side, c.command, c.args), c.done));
      }
    }
    const u = median(samples.unbundled);
    const b = median(samples.bundled);
    console.log(`${c.name.padEnd(24)}${u.toFixed(0).padStart(12)}${b.toFixed(0).padStart(12)}${(u / b).toFixed(2).padStart(19)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
