import { describe, expect, it } from 'vitest';
import { JOB_STATUSES } from '../../src/domain/states.js';
import { MODELS } from '../../src/models/registry.js';
import { toVideoView, videoStatusOf } from '../../src/services/openai/openai-video-view.js';
import { videoFileOf } from '../../src/services/openai/openai-video-content.js';

/** The video object from a native job: pure rules, no store. */
const modelOf = (path: string) => MODELS.find((m) => m.path === path)!;
const D_FAST = 'video/vendor-d/model-d-fast';
const SECOND = 1_000_000;

const job = (over: Partial<Parameters<typeof toVideoView>[0]> = {}): Parameters<typeof toVideoView>[0] => ({
  id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69',
  type: D_FAST,
  status: 'queued',
  createdAt: 1_795_435_200 * SECOND + 250_000,
  completedAt: null,
  request: { prompt: 'waves', aspect_ratio: '9:16', resolution: '1080p', duration: 6 },
  error: null,
  progress: null,
  ...over,
});

const ctx = { model: modelOf(D_FAST), retention: { outputDays: 30, jobDays: 90 } };

describe('the video object of a native job', () => {
  it("folds the nine native statuses into OpenAI's four", () => {
    expect(Object.fromEntries(JOB_STATUSES.map((s) => [s, videoStatusOf(s)]))).toEqual({
      backlogged: 'queued',
      queued: 'queued',
      scheduled: 'in_progress',
      processing: 'in_progress',
      sampling: 'in_progress',
      'intermediate-complete': 'in_progress',
      completed: 'completed',
      failed: 'failed',
      cancelled: 'failed',
    });
  });

  it("reports progress as 0 queued, the worker's fraction in progress (below 100), 100 completed", () => {
    expect(toVideoView(job(), ctx).progress).toBe(0);
    expect(toVideoView(job({ status: 'sampling', progress: 0.426 }), ctx).progress).toBe(43);
    expect(toVideoView(job({ status: 'sampling', progress: 1 }), ctx).progress).toBe(99);
    expect(toVideoView(job({ status: 'processing', progress: null }), ctx).progress).toBe(0);
    expect(toVideoView(job({ status: 'completed', completedAt: 1_795_435_260 * SECOND }), ctx).progress).toBe(100);
  });

  it('gives times in whole Unix seconds, and expires_at by the shorter retention that is not forever', () => {
    const done = toVideoView(job({ status: 'completed', completedAt: 1_795_435_260 * SECOND + 999_999 }), ctx);
    expect(done).toMatchObject({ created_at: 1_795_435_200, completed_at: 1_795_435_260, expires_at: 1_795_435_260 + 30 * 86_400 });
    expect(toVideoView(job({ status: 'completed', completedAt: 1_795_435_260 * SECOND }), { ...ctx, retention: { outputDays: 0, jobDays: 7 } }).expires_at).toBe(1_795_435_260 + 7 * 86_400);
    expect(toVideoView(job({ status: 'completed', completedAt: 1_795_435_260 * SECOND }), { ...ctx, retention: { outputDays: 0, jobDays: 0 } }).expires_at).toBeNull();
    expect(toVideoView(job(), ctx).expires_at).toBeNull();
  });

  it("reads seconds and size from the model's fields, its defaults filling what the job left out", () => {
    expect(toVideoView(job(), ctx)).toMatchObject({ seconds: '6', size: '1080x1920', model: D_FAST, prompt: 'waves' });
    expect(toVideoView(job({ request: { prompt: 'p' } }), ctx)).toMatchObject({ seconds: '8', size: '1280x720' });
    // A ratio written in pixels is the size itself; an edit's length is its input's, which no field says.
    expect(toVideoView(job({ type: 'video/vendor-c/model-c-edit', request: { prompt: 'p', ratio: '960:960' } }), { ...ctx, model: modelOf('video/vendor-c/model-c-edit') })).toMatchObject({ size: '960x960', seconds: '' });
  });

  it("reports the shape a model makes where its fields alone do not say it: model-e-1's mode, model-f's fixed frames", () => {
    const e1 = { ...ctx, model: modelOf('video/vendor-e/model-e-1') };
    const e1Job = (request: Record<string, unknown>) => job({ type: 'video/vendor-e/model-e-1', request: { prompt: 'p', ...request } });
    expect(toVideoView(e1Job({ mode: 'pro', aspect_ratio: '16:9', duration: 10 }), e1)).toMatchObject({ size: '1920x1080', seconds: '10' });
    expect(toVideoView(e1Job({ mode: 'pro', aspect_ratio: '9:16' }), e1)).toMatchObject({ size: '1080x1920', seconds: '5' });
    expect(toVideoView(e1Job({ mode: 'std' }), e1)).toMatchObject({ size: '1280x720', seconds: '5' });
    const f = { ...ctx, model: modelOf('video/vendor-f/model-f') };
    expect(toVideoView(job({ type: 'video/vendor-f/model-f', request: { prompt: 'p' } }), f)).toMatchObject({ seconds: '5', size: '1280x720' });
  });

  it('reports the model id the create named, else the path', () => {
    expect(toVideoView(job(), { ...ctx, modelId: 'sora-2' }).model).toBe('sora-2');
    expect(toVideoView(job(), ctx).model).toBe(D_FAST);
  });

  it("shows a failed job's code and a cancelled one as failed with code cancelled", () => {
    expect(toVideoView(job({ status: 'failed', error: { code: 'engine_failed', message: 'boom' } }), ctx).error).toEqual({ code: 'engine_failed', message: 'boom' });
    expect(toVideoView(job({ status: 'cancelled' }), ctx)).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
    expect(toVideoView(job({ status: 'completed', completedAt: 1 }), ctx).error).toBeNull();
  });

  it('finds the video among the outputs, not the preview, in each result shape', () => {
    expect(videoFileOf({ urls: ['/outputs/k/preview.jpg', '/outputs/k/video.mp4'] })).toBe('video.mp4');
    expect(videoFileOf({ urls: { clip: 'https://x.example/outputs/k/clip.webm' } })).toBe('clip.webm');
    expect(videoFileOf({ urls: [{ type: 'preview', url: '/outputs/k/a.png' }] })).toBeUndefined();
    expect(videoFileOf(null)).toBeUndefined();
  });
});
