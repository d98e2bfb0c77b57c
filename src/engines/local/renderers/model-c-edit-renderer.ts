import { join } from 'node:path';
import { loadImageMean } from '../image/image-inputs.js';
import type { ModelRenderer } from '../render-types.js';
import { writeVideoPreview } from '../preview.js';
import { optStr, str } from '../request-fields.js';
import type { Rgb } from '../image/scene-svg.js';
import { promptHue } from '../image/scene-svg.js';
import { Prng, sceneKey } from '../seed.js';
import { FPS, h264Args } from '../video/video-encode.js';
import { OUTPUT_MP4 } from '../video/video-scene.js';
import { loadVideoInput, reencodeVideo } from '../video/video-probe.js';

/**
 * video/vendor-c/model-c-edit: `init_video` re-timed to 24 fps, scaled and cropped to cover
 * `ratio` exactly, and colour graded by the prompt; same length, audio kept (re-encoded to AAC).
 * The grade is a per-channel lookup table in YUV plus a vignette: visible, and nearly free to run.
 */

export const renderModelCEdit: ModelRenderer = async (model, req, env) => {
  const [width, height] = parseRatio(str(req, 'ratio', '1280:720'));
  const video = await loadVideoInput(str(req, 'init_video', ''), 'init_video', env);
  const imageUrl = optStr(req, 'init_image_url');
  // The image is used for its colour only: the grade leans toward it.
  const reference = imageUrl ? await loadImageMean(env, imageUrl, 'init_image_url') : undefined;
  // `references` items have no documented fields; they act only through the request hash (seed).

  return {
    async render() {
      const frames = Math.max(1, Math.round(video.seconds * FPS));
      const grade = gradeFilter(new Prng(sceneKey(model, req)).fork('grade'), str(req, 'prompt', ''), reference);
      const out = join(env.ctx.outDir, OUTPUT_MP4.name);
      await reencodeVideo(video, env, {
        videoChain:
          `fps=${FPS},scale=${width}:${height}:force_original_aspect_ratio=increase,` +
          `crop=${width}:${height},setsar=1,format=yuv420p,${grade},` +
          // Cloning the last frame, without limit, covers a video stream shorter than its container says.
          `tpad=stop_mode=clone:stop=-1,trim=end_frame=${frames}`,
        seconds: frames / FPS,
        encode: h264Args(),
        out,
      });
      return { outputs: [OUTPUT_MP4], preview: await writeVideoPreview(out, frames, env) };
    },
  };
};

/** `'1280:720'` → `[1280, 720]`; the schema allows only even sizes. */
export function parseRatio(ratio: string): [number, number] {
  const m = /^(\d+):(\d+)$/.exec(ratio);
  return m ? [Number(m[1]), Number(m[2])] : [1280, 720];
}

/**
 * Contrast, brightness and saturation from the seed; a colour cast in the prompt's hue; the
 * reference image's colour, if any, pulling the cast its way; a vignette.
 */
function gradeFilter(prng: Prng, prompt: string, reference: Rgb | undefined): string {
  const contrast = prng.range(0.9, 1.3);
  const brightness = prng.range(-10, 10);
  const saturation = prng.range(0.8, 1.5);
  const hue = (promptHue(prompt) * Math.PI) / 180;
  const cast = prng.range(14, 26);
  let du = Math.cos(hue) * cast;
  let dv = Math.sin(hue) * cast;
  if (reference) {
    const [r, g, b] = reference;
    du += 0.5 * (-0.148 * r - 0.291 * g + 0.439 * b);
    dv += 0.5 * (0.439 * r - 0.368 * g - 0.071 * b);
  }
  const f = (x: number) => x.toFixed(3);
  const chroma = (d: number) => `'clip((val-128)*${f(saturation)}+128+${f(d)},16,240)'`;
  return (
    `lutyuv=y='clip((val-126)*${f(contrast)}+126+${f(brightness)},16,235)':u=${chroma(du)}:v=${chroma(dv)},` +
    `vignette=angle=${f(prng.range(Math.PI / 6, Math.PI / 4))}`
  );
}
