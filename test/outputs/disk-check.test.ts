import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { DISK_CHECK_TTL_MS, DiskCheck, WRITE_PROBE_FILE } from '../../src/outputs/disk/disk-check.js';
import { waitFor } from '../helpers/scripted-engine.js';

describe('DiskCheck', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const setup = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mediagen-disk-'));
    dirs.push(dir);
    const clock = new ManualClock('2026-11-29T00:00:00Z');
    // A directory where the probe file goes makes the probe write fail, as a read-only mount would.
    const breakProbe = () => (rmSync(join(dir, WRITE_PROBE_FILE), { force: true }), mkdirSync(join(dir, WRITE_PROBE_FILE)));
    return { clock, check: new DiskCheck(dir, 0, clock), breakProbe };
  };

  it('answers from its last check within its life, and measures again before answering once it has expired', async () => {
    const { clock, check, breakProbe } = setup();
    expect((await check.check()).ok).toBe(true);
    breakProbe();
    clock.advance(DISK_CHECK_TTL_MS / 2 - 1);
    expect((await check.check()).ok).toBe(true);
    clock.advance(DISK_CHECK_TTL_MS / 2 + 1);
    expect(await check.check()).toMatchObject({ ok: false, kind: 'io_error' });
  });

  it('starts the next check in the background in the second half of an answer\'s life, so no caller waits for the disk under steady traffic', async () => {
    const { clock, check, breakProbe } = setup();
    expect((await check.check()).ok).toBe(true);
    breakProbe();
    clock.advance(DISK_CHECK_TTL_MS / 2);
    // This caller gets the answer it would have got before, at once...
    expect((await check.check()).ok).toBe(true);
    // ...and the check it started replaces it without the clock moving on: the next callers see the fault.
    await waitFor(async () => !(await check.check()).ok, 'the background check to report the broken disk');
    expect(await check.check()).toMatchObject({ ok: false });
  });
});
