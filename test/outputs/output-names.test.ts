import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { keepUpstreamOutputs } from '../../src/engines/upstream/upstream-outputs.js';
import { outputStem } from '../../src/outputs/output-store.js';

/**
 * One naming rule for a job's output files (docs/decisions.md, "Output file names"): a job's only
 * file is `output.<ext>`, as the local engine has always named it and the README promises; several
 * are `output-1.<ext>`, `output-2.<ext>` in the result's order. Gateway and ComfyUI jobs used to
 * store even a single file as `output-1.png` (issue 42).
 */

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
const outDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mediagen-names-'));
  dirs.push(dir);
  return dir;
};
const png = (width: number) => sharp({ create: { width, height: 2, channels: 3, background: '#336699' } }).png().toBuffer();

describe('output file names', () => {
  it('the stem is the base alone for a single file, numbered from 1 among several', () => {
    expect(outputStem('output', 0, 1)).toBe('output');
    expect([0, 1, 2].map((i) => outputStem('output', i, 3))).toEqual(['output-1', 'output-2', 'output-3']);
    expect(outputStem('preview', 0, 1)).toBe('preview');
  });

  it("an upstream's single output is stored as output.png, and two as output-1.png and output-2.png, in order", async () => {
    const one = await outDir();
    const single = await keepUpstreamOutputs([await png(2)], async (b) => b, one, ['image/png'], 'none');
    expect(single).toEqual([{ name: 'output.png', contentType: 'image/png' }]);
    expect(await readdir(one)).toEqual(['output.png']);

    const two = await outDir();
    const sources = [await png(2), await png(5)];
    const files = await keepUpstreamOutputs(sources, async (b) => b, two, ['image/png'], 'none');
    expect(files.map((f) => f.name)).toEqual(['output-1.png', 'output-2.png']);
    expect((await sharp(join(two, 'output-2.png')).metadata()).width).toBe(5);
  });
});
