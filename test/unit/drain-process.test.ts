import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { drainProcess, trackInFlight } from '../../src/cli/graceful-shutdown.js';
import type { Drainable } from '../../src/cli/graceful-shutdown.js';

/** A real loopback listener whose requests wait until the test lets them answer. */
async function heldServer() {
  const pending: (() => void)[] = [];
  const server = createServer((_req, res) => pending.push(() => res.end('done')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const inFlight = trackInFlight(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { server, inFlight, url, close, pending };
}

/** A log that keeps its lines. */
function capturingLog() {
  const lines: { level: string; obj: object; msg: string }[] = [];
  const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

function drainable(s: { server: Server; inFlight: ReturnType<typeof trackInFlight>; close: () => Promise<void> }, extra: Partial<Drainable>) {
  let draining = false;
  const { lines, log } = capturingLog();
  const p: Drainable = {
    http: { server: s.server, inFlight: s.inFlight, close: s.close },
    readiness: { startDraining: () => void (draining = true) },
    drainDelayMs: 0,
    graceMs: 10_000,
    log,
    ...extra,
  };
  return { p, lines, isDraining: () => draining };
}

describe('drainProcess (role all: a listener and a job runner)', () => {
  it('waits for the listener to drain when the job runner fails to stop, then says false and logs why', async () => {
    const s = await heldServer();
    const answered = fetch(s.url).then((r) => r.text());
    await until(() => s.pending.length === 1);
    const { p, lines } = drainable(s, {
      runner: { worker: { running: 1 }, stop: () => Promise.reject(new Error('the database is down')) },
    });
    let settled = false;
    const drained = drainProcess('SIGTERM', p).finally(() => (settled = true));
    // The runner's stop has failed by now; the request in flight still holds the drain.
    await new Promise((r) => setTimeout(r, 100));
    expect(settled).toBe(false);
    s.pending[0]!();
    expect(await answered).toBe('done');
    expect(await drained).toBe(false);
    const error = lines.find((l) => l.level === 'error');
    expect(error?.msg).toMatch(/job runner/);
    expect(JSON.stringify(error?.obj)).toContain('the database is down');
    expect(lines.at(-1)?.msg).toBe('drained');
  });

  it('with drain_delay_ms, is not ready at once, still takes requests during the delay, then closes', async () => {
    const s = await heldServer();
    let stopped = false;
    const { p, lines, isDraining } = drainable(s, {
      drainDelayMs: 300,
      runner: { worker: { running: 0 }, stop: async () => ((stopped = true), { inFlight: 0, cut: 0 }) },
    });
    const drained = drainProcess('SIGTERM', p);
    expect(isDraining()).toBe(true);
    // Within the delay the listener is open: a new request is taken and answered.
    const late = fetch(s.url).then((r) => r.text());
    await until(() => s.pending.length === 1);
    expect(stopped).toBe(true);
    s.pending[0]!();
    expect(await late).toBe('done');
    expect(await drained).toBe(true);
    expect(s.server.listening).toBe(false);
    const last = lines.at(-1)!;
    expect(last.msg).toBe('drained');
    expect(last.obj).toMatchObject({ requestsTakenWhileDraining: 1, requestsCut: 0 });
  });
});
