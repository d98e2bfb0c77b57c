import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, EngineContext, EngineJob, OutputFile } from '../../src/engines/engine.js';
import { createTestApp, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { deferred, waitFor } from '../helpers/scripted-engine.js';

const MODEL: OutputFile = { name: 'model.glb', contentType: 'model/gltf-binary', role: 'model' };
const PREVIEW: OutputFile = { name: 'preview.png', contentType: 'image/png', role: 'preview' };

/** Outputs with roles, as the 3D renderer gives them, held at intermediate-complete until released. */
class RoleEngine implements Engine {
  readonly name = 'roles';
  readonly release = deferred();
  async run(_job: EngineJob, ctx: EngineContext): Promise<OutputFile[]> {
    await ctx.stage('processing');
    await ctx.stage('sampling');
    await writeFile(join(ctx.outDir, PREVIEW.name), 'preview');
    await ctx.stage('intermediate-complete', PREVIEW);
    await this.release.promise;
    await writeFile(join(ctx.outDir, MODEL.name), 'model');
    return [MODEL, PREVIEW];
  }
}

type Job = { status: string; result?: { urls: Array<{ type: string; url: string }> } };

describe('a job whose outputs have roles', () => {
  const engine = new RoleEngine();
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ worker: { engine } });
  });
  afterAll(() => t.close());

  it('lists its preview as [{type: preview, url}] at intermediate-complete, and both files as {type, url} once completed', async () => {
    const id = (await generate(t, '3d/vendor-k/model-k-1', { image_url: 'https://example.com/object.png' })).json<{ job_id: string }>().job_id;
    const previewing = await waitFor(async () => {
      const job = (await get(t, `/jobs/${id}`)).json<Job>();
      return job.status === 'intermediate-complete' ? job : undefined;
    }, 'the job to reach intermediate-complete');
    expect(previewing.result!.urls).toEqual([{ type: 'preview', url: expect.stringMatching(/\/preview\.png$/) }]);
    engine.release.resolve();
    const done = await waitFor(async () => {
      const job = (await get(t, `/jobs/${id}`)).json<Job>();
      return job.status === 'completed' ? job : undefined;
    }, 'the job to complete');
    expect(done.result!.urls).toEqual([
      { type: 'model', url: expect.stringMatching(/\/model\.glb$/) },
      { type: 'preview', url: expect.stringMatching(/\/preview\.png$/) },
    ]);
  });
});
