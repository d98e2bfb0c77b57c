import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, generate } from './helpers/app.js';
import type { TestApp } from './helpers/app.js';

describe('smoke', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('creates a job with a valid body', async () => {
    const res = await generate(t, 'image/vendor-a/model-a-2/medium', { prompt: 'p', aspect_ratio: '1:1', resolution: '1K' });
    expect(res.statusCode).toBe(200);
  });
});
