import { join } from 'node:path';
import { EngineError } from '../../engine.js';
import { probeFile } from '../../media/ffprobe.js';
import { count, seconds, tooLarge } from '../../media/media-limits.js';
import { VIDEO_DEMUXERS } from '../../media/media-types.js';
import { DEFAULT_UPSCALE_FACTOR, UPSCALE_MAX_INPUT_SECONDS, UPSCALE_RESOLUTIONS } from '../../../models/video/video-upscale.js';
import type { UpscaleResolution } from '../../../models/video/video-upscale.js';
import type { ModelRenderer } from '../render-types.js';
import { writeVideoPreview } from '../preview.js';
import { num, optStr, str } from '../request-fields.js';
import type { Request } from '../request-fields.js';
import { FPS, h264Args } from '../video/video-encode.js';
import { OUTPUT_MP4 } from '../video/video-scene.js';
import { loadVideoInput, reencodeVideo } from '../video/video-probe.js';
import type { VideoInput } from '../video/video-probe.js';

/**
 * enhance/vendor-j/video-upscale: the input scaled with the Lanczos kernel to a factor of its size
 * or to fit a named resolution, re-timed to `target_fps` (motion-compensated interpolation, or
 * frame blending when that would be too slow), its length and sound kept. The main output
 * carries its measured length: the job is charged per output second.
 */

/** The largest output frame, width x height: 4K UHD. */
export const MAX_OUTPUT_PIXELS = 3840 * 2160;

/**
 * Motion-compensated interpolation (`minterpolate`, mci: one thread) costs about 0.09 µs per input
 * pixel per output frame, measured on this project's 2-core machine (640x360 re-timed from 24 to
 * 60 fps for 5 s, 69 M pixel-frames: 6.2 s); frame blending (`framerate`) a tenth of that (0.5 s).
 * Past this many pixel-frames (some 4 s of work) the blend is used: a 60 s 1080p input re-timed
 * to 60 fps would take mci some 11 minutes, past any job timeout; the blend takes about one.
 */
export const MCI_MAX_PIXEL_FRAMES = 45_000_000;

export const renderVideoUpscale: ModelRenderer = async (_model, req, env) => {
  const video = await loadVideoInput(str(req, 'video_url', ''), 'video_url', env);
  if (video.seconds > UPSCALE_MAX_INPUT_SECONDS) {
    // The hold covers this many seconds: a longer input would cost more than was held.
    throw tooLarge('video_url', `lasts ${seconds(video.seconds)}; this model takes at most ${seconds(UPSCALE_MAX_INPUT_SECONDS)}`);
  }
  const [width, height] = outputSize(video, req);
  const inFps = Number.isFinite(video.fps) && video.fps > 0 ? video.fps : FPS;
  const fps = typeof req.target_fps === 'number' ? req.target_fps : inFps;
  const frames = Math.max(1, Math.round(video.seconds * fps));

  const rate = rateText(fps);

  return {
    async render() {
      const out = join(env.ctx.outDir, OUTPUT_MP4.name);
      await reencodeVideo(video, env, {
        videoChain:
          `${retime(video, inFps, fps, frames)},scale=${width}:${height}:flags=lanczos,setsar=1,format=yuv420p,` +
          // Cloning the last frame covers a video stream shorter than its container says (and
          // interpolation, which stops at the last input frame). The frames are then stamped
          // n / fps and written as they are: ffmpeg's own frame-rate conversion at the output
          // (-r without passthrough) measurably added frames after minterpolate.
          `tpad=stop_mode=clone:stop=-1,trim=end_frame=${frames},setpts=N/(${rate}*TB)`,
        seconds: frames / fps,
        encode: [...h264Args(rate), '-vsync', 'passthrough'],
        out,
      });
      const durationUs = await measure(out, env.ctx.signal, await env.ffprobe());
      return { outputs: [{ ...OUTPUT_MP4, durationUs }], preview: await writeVideoPreview(out, frames, env) };
    },
  };
};

/**
 * The output frame: the input (as shown, rotation applied) times the factor, or fitted inside the
 * resolution's frame, turned for a portrait input; even sides (4:2:0 chroma). Past
 * MAX_OUTPUT_PIXELS the job fails: the input's size is known only now.
 */
export function outputSize(video: Pick<VideoInput, 'width' | 'height'>, req: Request): [number, number] {
  const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));
  const res = optStr(req, 'resolution') as UpscaleResolution | undefined;
  let size: [number, number];
  let asked: string;
  if (res !== undefined && res in UPSCALE_RESOLUTIONS) {
    const [long, short] = UPSCALE_RESOLUTIONS[res];
    const [boxW, boxH] = video.width >= video.height ? [long, short] : [short, long];
    const k = Math.min(boxW / video.width, boxH / video.height);
    size = [Math.min(boxW, even(video.width * k)), Math.min(boxH, even(video.height * k))];
    asked = `resolution ${res}`;
  } else {
    const factor = num(req, 'upscale_factor', DEFAULT_UPSCALE_FACTOR);
    size = [even(video.width * factor), even(video.height * factor)];
    asked = `upscale_factor ${factor}`;
  }
  if (size[0] * size[1] > MAX_OUTPUT_PIXELS) {
    throw tooLarge(
      'video_url',
      `is ${video.width} x ${video.height} pixels; ${asked} would make ${size[0]} x ${size[1]}, ` +
        `more than the ${count(MAX_OUTPUT_PIXELS)} pixels (3840 x 2160) an output frame may have`,
    );
  }
  return size;
}

/**
 * The filters that make `fps` frames per second from the input's `inFps`: more frames are
 * interpolated by motion compensation (or blended, past MCI_MAX_PIXEL_FRAMES); the same or fewer
 * are picked (`fps`, which also evens out a variable frame rate).
 */
function retime(video: VideoInput, inFps: number, fps: number, frames: number): string {
  const rate = rateText(fps);
  if (fps <= inFps + 1e-3) return `fps=${rate}`;
  if (video.width * video.height * frames <= MCI_MAX_PIXEL_FRAMES) return `minterpolate=fps=${rate}:mi_mode=mci`;
  return `framerate=fps=${rate}`;
}

/** A frame rate as ffmpeg reads it exactly: `30`, `30000/1001` (NTSC rates), else 3 decimals. */
export function rateText(fps: number): string {
  if (Math.abs(fps - Math.round(fps)) < 1e-3) return String(Math.round(fps));
  const ntsc = Math.round(fps * 1.001);
  if (Math.abs(fps - (ntsc * 1000) / 1001) < 1e-3) return `${ntsc * 1000}/1001`;
  return fps.toFixed(3);
}

/** The written video's length, µs: its video stream's (frames / rate), else the container's. */
async function measure(path: string, signal: AbortSignal, ffprobe: string): Promise<number> {
  const report = await probeFile(ffprobe, path, VIDEO_DEMUXERS.mp4, signal);
  const stream = report.streams.find((s) => s.type === 'video');
  const secs = stream && Number.isFinite(stream.duration) ? stream.duration : report.duration;
  if (!Number.isFinite(secs)) throw new EngineError('engine_failed', 'the local engine could not measure the upscaled video');
  return Math.round(secs * 1_000_000);
}
