import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, get } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { checkedInject } from '../helpers/checked-inject.js';
import { OPENAI_SECTION } from './openai-live.js';

/** X-Mediagen-Tags through the OpenAI door (issue 40, point 5): its creates are the native ones. */

interface Listed {
  items: { type: string; status: string; tags?: string[] }[];
}

const post = (t: TestApp, url: string, body: unknown, tags: string) =>
  checkedInject(t.app, {
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'x-mediagen-tags': tags },
    payload: JSON.stringify(body),
  });

describe.each(backends)('X-Mediagen-Tags on the OpenAI door on $name', { timeout: 120_000 }, (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('POST /v1/images/generations tags each of its n jobs; a bad tag is an OpenAI-shaped 400 naming the header', async () => {
    t = await createTestApp({ backend, realClock: true, engineLatencyMs: 0, openai: OPENAI_SECTION, worker: { concurrency: 2, pollMs: 50 } });
    const res = await post(t, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'a lighthouse', n: 2, size: '1024x1024' }, 'team-a, door');
    expect(res.statusCode, res.body).toBe(200);
    const jobs = (await get(t, '/jobs?tag=door')).json<Listed>().items;
    expect(jobs.map((j) => [j.type, j.status, j.tags])).toEqual([
      [OPENAI_SECTION.models['gpt-image-1'], 'completed', ['door', 'team-a']],
      [OPENAI_SECTION.models['gpt-image-1'], 'completed', ['door', 'team-a']],
    ]);
    const bad = await post(t, '/v1/images/generations', { model: 'gpt-image-1', prompt: 'a lighthouse' }, 'Door');
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json<{ error: { message: string } }>().error.message).toContain('X-Mediagen-Tags');
  });

  it('POST /v1/videos tags its job; a bad tag is an OpenAI-shaped 400 naming the header', async () => {
    t = await createTestApp({ backend, openai: OPENAI_SECTION });
    const res = await post(t, '/v1/videos', { prompt: 'a paper boat' }, 'door-video');
    expect(res.statusCode, res.body).toBe(200);
    const jobs = (await get(t, '/jobs?tag=door-video')).json<Listed>().items;
    expect(jobs.map((j) => [j.type.startsWith('video/'), j.status, j.tags])).toEqual([[true, 'queued', ['door-video']]]);
    const bad = await post(t, '/v1/videos', { prompt: 'a paper boat' }, 'a,,b');
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json<{ error: { message: string } }>().error.message).toContain('X-Mediagen-Tags has an empty tag');
  });
});
