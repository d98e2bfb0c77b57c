import { join } from 'node:path';
import { loadImageFile } from '../image/image-inputs.js';
import type { ModelRenderer, RenderEnv } from '../render-types.js';
import { bool, optStr, str } from '../request-fields.js';
import type { Request } from '../request-fields.js';
import { canonicalJson } from '../../../lib/canonical-json.js';
import { Prng, sceneKey, sha256 } from '../seed.js';
import { renderSceneVideo } from '../video/video-scene.js';
import { MODEL_F_SHAPE, modelDFastShape, modelE1Shape } from '../../../models/video/video-shapes.js';

/**
 * The generated-video models: inputs and the picture (video-scene.ts). Their frame sizes and
 * lengths are the models' own (models/video/video-shapes.ts), which the API reports too.
 */

type Size = readonly [number, number];

/** Fits an input image to the frame and writes it where the render will read it. */
async function frameImage(req: Request, field: string, size: Size, env: RenderEnv): Promise<string | undefined> {
  const url = optStr(req, field);
  if (!url) return undefined;
  const file = join(env.workDir, `${field}.png`);
  await loadImageFile(env, url, field, size[0], size[1], file);
  return file;
}

export const renderModelDFast: ModelRenderer = async (model, req, env) => {
  const shape = modelDFastShape(req);
  const size: Size = [shape.width, shape.height];
  const startImage = await frameImage(req, 'start_image', size, env);
  const prng = new Prng(sceneKey(model, req));
  return {
    render: () =>
      renderSceneVideo(
        {
          width: size[0],
          height: size[1],
          seconds: shape.seconds,
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
  const shape = modelE1Shape(req);
  const size: Size = [shape.width, shape.height];
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
          seconds: shape.seconds,
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
  const size: Size = [MODEL_F_SHAPE.width, MODEL_F_SHAPE.height];
  const startImage = await frameImage(req, 'start_image', size, env);
  const prng = new Prng(sceneKey(model, req));
  return {
    render: () =>
      renderSceneVideo(
        {
          width: size[0],
          height: size[1],
          seconds: MODEL_F_SHAPE.seconds,
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
