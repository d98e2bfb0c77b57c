import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serveFlags } from './wiring.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerProcess {
  readonly pid: number;
  /** SIGTERM, then waits for the process to exit (SIGKILL after 15 s). */
  stop(): Promise<void>;
}

/**
 * `mediagen serve --role worker` in a process of its own, run from source with tsx, on the same
 * SQLite file or PostgreSQL database as the bench's API: the deployment the split dispatch figure
 * is about. It runs the real local engine at zero simulated latency. Resolves once it says it runs.
 */
export async function startWorkerProcess(o: { dataDir: string; databaseUrl?: string | undefined }): Promise<WorkerProcess> {
  const flags: Record<string, string | boolean> = { ...serveFlags(o), role: 'worker', 'engine-latency-ms': '0' };
  const args = Object.entries(flags).flatMap(([k, v]) => (v === true ? [`--${k}`] : [`--${k}`, String(v)]));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'production' },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the worker process did not start in 60 s: ${stderr}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('mediagen: running')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the worker process exited with ${code}: ${stderr}`));
    });
  });
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(kill);
    },
  };
}
