import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, del, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

/** The model ids POST /v1/videos named (store/openai-video-store.ts), kept with their jobs. */
describe.each(backends)('the OpenAI videos store on $name', (backend) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("keeps the first id recorded for a job, reads several at once, and goes with the job's deletion", async () => {
    t = await createTestApp({ backend });
    const ids: string[] = [];
    for (const prompt of ['one', 'two', 'three']) ids.push((await generate(t, 'video/vendor-f/model-f', { prompt })).json<{ job_id: string }>().job_id);
    const [a, b, c] = ids as [string, string, string];
    await t.store.openaiVideos.recordModel(a, 'sora-2');
    await t.store.openaiVideos.recordModel(a, 'sora-2-pro');
    await t.store.openaiVideos.recordModel(b, 'video-alias');
    expect(await t.store.openaiVideos.modelsOf([a, b, c])).toEqual(new Map([[a, 'sora-2'], [b, 'video-alias']]));
    expect(await t.store.openaiVideos.modelsOf([])).toEqual(new Map());
    expect((await del(t, `/jobs/${a}`)).statusCode).toBe(200);
    expect(await t.store.openaiVideos.modelsOf([a, b])).toEqual(new Map([[b, 'video-alias']]));
  });
});
