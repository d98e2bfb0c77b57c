import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, generate } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

describe.each(backends)('admission under concurrent requests: $name', (backend) => {
  let t: TestApp;
  afterEach(async () => t?.close());

  it('admits exactly the limit, backlogs exactly the backlog and refuses the rest, however the requests interleave', async () => {
    t = await createTestApp({ backend, limits: { maxConcurrentJobs: 3, maxBackloggedJobs: 5 } });
    const responses = await Promise.all(Array.from({ length: 500 }, (_, i) => generate(t, 'image/vendor-b/model-b-1', { prompt: `p${i}` })));
    const codes = responses.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(8);
    expect(codes.filter((c) => c === 429)).toHaveLength(492);
    const statuses = responses.filter((r) => r.statusCode === 200).map((r) => (r.json() as { status: string }).status);
    expect(statuses.filter((s) => s === 'queued')).toHaveLength(3);
    expect(statuses.filter((s) => s === 'backlogged')).toHaveLength(5);
  });
});
