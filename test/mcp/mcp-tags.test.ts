import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { createTestApp, errorOf, generate, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { B1, MINIMAL } from '../http/generate-support.js';
import { call, callError, connect, listen } from './mcp-client.js';

type Job = { job_id: string; tags?: string[] };

/** The job tools' `tags` (X-Mediagen-Tags over HTTP) and list_jobs' `tag`, over the SDK's client. */
describe.each(backends)('MCP tags on $name', (backend) => {
  let t: TestApp;
  let client: Client;
  beforeAll(async () => {
    t = await createTestApp({ backend });
    client = await connect(await listen(t), t.token);
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it('generate stores its tags as the header does; list_jobs filters by one', async () => {
    const job = await call<Job>(client, 'generate', { model: B1, input: MINIMAL[B1], tags: ['team-a', 'campaign-7', 'team-a'] });
    expect(job.tags).toEqual(['campaign-7', 'team-a']);
    expect((await get(t, `/jobs/${job.job_id}`)).json<Job>().tags).toEqual(['campaign-7', 'team-a']);
    await call<Job>(client, 'generate', { model: B1, input: MINIMAL[B1] });
    const { items } = await call<{ items: Job[] }>(client, 'list_jobs', { tag: 'campaign-7' });
    expect(items.map((j) => [j.job_id, j.tags])).toEqual([[job.job_id, ['campaign-7', 'team-a']]]);
  });

  it('refuses bad tags with the message HTTP gives, naming its own argument: tags, tag', async () => {
    for (const bad of [['Team-A'], [''], ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']]) {
      const http = errorOf(await generate(t, B1, MINIMAL[B1], { 'x-mediagen-tags': bad.join(',') }), 400);
      const { message } = await callError(client, 'generate', { model: B1, input: MINIMAL[B1], tags: bad });
      expect(message).toBe(http.replace('X-Mediagen-Tags', 'tags'));
    }
    const list = errorOf(await get(t, '/jobs?tag=a/b'), 400);
    expect((await callError(client, 'list_jobs', { tag: 'a/b' })).message).toBe(list.replace("query parameter 'tag'", "'tag'"));
  });
});
