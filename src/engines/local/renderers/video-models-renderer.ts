import { join } from 'node:path';
import { loadImageFile } from '../image/image-inputs.js';
import type { ModelRenderer, RenderEnv } from '../render-types.js';
import { bool, num, optStr, str } from '../request-fields.js';
import type { Request } from '../request-fields.js';
import { canonicalJson } from '../../../lib/canonical-json.js';
import { Prng, sceneKey, sha256 } from '../seed.js';
import { renderSceneVideo } from '../video/video-scene.js';

/** The generated-video models: sizes, lengths and inputs; the picture itself is video-scene.ts. */

type Size = readonly [number, number];

/** Frame sizes by aspect ratio at the 720p and 1080p tiers (model-d-fast; model-e-1 std and pro). */
export const VIDEO_SIZES: Readonly<Record<string, Readonly<Record<string, Size>>>> = Object.freeze({
  '720p': { '16:9': [1280, 720], '9:16': [720, 1280], '1:1': [720, 720] },
  '1080p': { '16:9': [1920, 1080], '9:16': [1080, 1920], '1:1': [1080, 1080] },
});

/** model-f has no size or length parameters: one fixed shape, documented in docs/engine.md. */
export const MODEL_F_SIZE: Size = [1280, 720];
export const MODEL_F_SECONDS = 5;

function videoSize(tier: string, aspect: string): Size {
  return VIDEO_SIZES[tier]?.[aspect] ?? [1280, 720];
}

/** Fits an input image to the frame and writes it where the render will read it. */
async function frameImage(req: Request, field: string, size: Size, env: RenderEnv): Promise<string | undefined> {
  const url = optStr(req, field);
  if (!url) return undefined;
  const file = join(env.workDir, `${field}.png`);
  await loadImageFile(env, url, field, size[0], size[1], file);
  return file;
}

/** Picks one of the allowed values, so an out-of-range number cannot make an odd length. */
function choice(value: number, allowed: readonly number[]): number {
  return allowed.includes(value) ? value : allowed[allowed.length - 1]!;
}

export const renderModelDFast: ModelRenderer = async (model, req, env) => {
  const size = videoSize(str(req, 'resolution', '720p'), str(req, 'aspect_ratio', '16:9'));
  const startImage = await frameImage(req, 'start_image', size, env);
  const prng = new Prng(sceneKey(model, req));
  return {
    render: () =>
      renderSceneVideo(
        {
          width: size[0],
          height: size[1],
          seconds: choice(num(req, 'duration', 8), [4, 6, 8]),
          prompt: str(req, 'prompt', ''),
          prng,
          camera: prng.fork('camera'),
          startImage,
          audio: bool(req, 'generate_audio', false),
        },
        env,
      ),
  };
};

export const renderModelE1: ModelRenderer = async (model, req, env) => {
  const tier = str(req, 'mode', 'std') === 'pro' ? '1080p' : '720p';
  const size = videoSize(tier, str(req, 'aspect_ratio', '16:9'));
  const startImage = await frameImage(req, 'start_image', size, env);
  const endImage = await frameImage(req, 'end_image', size, env);
  const prng = new Prng(sceneKey(model, req));
  const cameraControl = req.camera_control;
  // A camera control, whatever its fields, picks the camera path; without one the seed does.
  const camera =
    cameraControl !== undefined && cameraControl !== null
      ? new Prng(sha256('camera_control', canonicalJson(cameraControl)))
      : prng.fork('camera');
  return {
    render: () =>
      renderSceneVideo(
        {
          width: size[0],
          height: size[1],
          seconds: choice(num(req, 'duration', 5), [5, 10]),
          prompt: str(req, 'prompt', ''),
          prng,
          camera,
          startImage,
          endImage,
          audio: false,
        },
        env,
      ),
  };
};

export const renderModelF: ModelRenderer = async (model, req, env) => {
  const startImage = await frameImage(req, 'start_image', MODEL_F_SIZE, env);
  const prng = new Prng(sceneKey(model, req));
  return {
    render: () =>
      renderSceneVideo(
        {
          width: MODEL_F_SIZE[0],
          height: MODEL_F_SIZE[1],
          seconds: MODEL_F_SECONDS,
          prompt: str(req, 'prompt', ''),
          prng,
          camera: prng.fork('camera'),
          startImage,
          audio: false,
        },
        env,
      ),
  };
};
