import { availableParallelism } from 'node:os';
import { DomainError } from '../domain/error-catalogue.js';
import type { MediaLimits } from '../engines/media/media-limits.js';
import { Semaphore } from '../lib/semaphore.js';
import type { Inspection, Inspector } from '../services/assets/assets.js';

/** Uploads waiting for an inspection slot, per slot, before more are answered "busy". */
const WAITING_PER_SLOT = 4;
/** What a refused upload is told to wait: about one inspection's time. */
const BUSY_RETRY_AFTER_S = 5;

/**
 * The asset service's inspector: the engines' hardened media inspection (src/engines/media/media-inspect.ts)
 * with this process's limits and tools. Loaded on the first upload, so `mediagen admin` never
 * loads sharp or locates ffmpeg. A whole decode can take seconds of CPU, so at most one runs per
 * core; a few more uploads wait their turn, and beyond them an upload is answered 503 with
 * Retry-After, so a burst of uploads cannot starve the API and the job workers.
 */
export function assetInspector(limits: MediaLimits, slots = availableParallelism(), inspect: Inspector = mediaInspection(limits)): Inspector {
  const gate = new Semaphore(slots, slots * WAITING_PER_SLOT);
  return async (path, signal): Promise<Inspection> => {
    const release = await gate.acquire(signal);
    if (!release) {
      throw new DomainError('unavailable', 'the server is busy checking other uploads; retry shortly', { retryAfterSeconds: BUSY_RETRY_AFTER_S });
    }
    try {
      return await inspect(path, signal);
    } finally {
      release();
    }
  };
}

/** One inspection, its refusals as the service reads them. */
function mediaInspection(limits: MediaLimits): Inspector {
  return async (path, signal) => {
    const [{ inspectMedia, MediaRefusal }, { locateFfmpeg }, { locateFfprobe }] = await Promise.all([
      import('../engines/media/media-inspect.js'),
      import('../engines/media/ffmpeg.js'),
      import('../engines/media/ffprobe.js'),
    ]);
    const [ffmpegPath, ffprobePath] = await Promise.all([locateFfmpeg(), locateFfprobe()]);
    try {
      const media = await inspectMedia(path, { ffmpegPath, ffprobePath, limits, signal });
      return { ok: true, ...media };
    } catch (err: unknown) {
      if (err instanceof MediaRefusal) return { ok: false, message: err.message };
      throw err;
    }
  };
}
