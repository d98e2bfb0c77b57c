import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downloadOutputs } from '../../packages/client/src/cli/output.js';
import type { Job } from '../../packages/client/src/index.js';

const ID = '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69';
const completed = (jobId: string, urls: string[]): Job => ({ job_id: jobId, type: 'image/x', status: 'completed', created_at: '2026-11-22T12:00:00.000000Z', result: { urls } }) as Job;

/** `mediagen generate --out`: what the server sends never leads a file out of --out. */
describe('downloadOutputs', () => {
  let base: string;
  let root: string;
  const server = createServer((req, res) => res.end(`bytes of ${req.url}`));
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    root = await mkdtemp(join(tmpdir(), 'mediagen-out-'));
  });
  afterAll(async () => {
    server.close();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses a job id that is not a UUID, and writes nothing anywhere', async () => {
    const out = join(root, 'a', 'out');
    for (const bad of ['../../../escaped', `${ID}/../../x`, '..', '']) {
      await expect(downloadOutputs(completed(bad, [`${base}/evil.desktop`]), out)).rejects.toThrow('the server sent a job id that is not a UUID');
    }
    expect(await readdir(root)).toEqual([]);
  });

  it('writes <job id>-<name> inside --out, de-duplicating equal names and keeping a malformed %-escape', async () => {
    const out = join(root, 'b');
    const paths = await downloadOutputs(completed(ID, [`${base}/x/output.png`, `${base}/y/output.png`, `${base}/z/100%25%zz.png`]), out);
    expect(paths).toEqual([join(out, `${ID}-output.png`), join(out, `${ID}-output-2.png`), join(out, `${ID}-100_25_zz.png`)]);
    expect(await readFile(paths[1]!, 'utf8')).toBe('bytes of /y/output.png');
  });
});
