import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as TfCore from '@tensorflow/tfjs-core';
import type { LayersModel } from '@tensorflow/tfjs-layers';

/**
 * ESRGAN (the RDN "slim" generator of UpscalerJS, MIT, weights in `@upscalerjs/esrgan-slim`) on
 * TensorFlow.js with its WebAssembly backend. Imported only by `neural-upscale.ts` through a
 * dynamic import, so a process that never upscales never loads TensorFlow.js.
 *
 * Nothing is fetched: the backend's `.wasm` files are read from `@tensorflow/tfjs-backend-wasm`'s
 * `dist/` and each model's `model.json` and weight shards from the installed package's
 * `models/x<scale>/`, handed to `loadLayersModel` in memory (`tf.io.fromMemory`). UpscalerJS's own
 * `upscaler` package is not used: on Node it wants `@tensorflow/tfjs-node` (a downloaded native
 * binary). The model takes and gives RGB in 0..255 (its `inputRange`/`outputRange`), NHWC, any size.
 */

export type EsrganScale = 2 | 3 | 4 | 8;
/** The scales `@upscalerjs/esrgan-slim` ships weights for. */
export const ESRGAN_SCALES: readonly EsrganScale[] = [2, 3, 4, 8];

export interface EsrganModel {
  readonly scale: EsrganScale;
  /** RGB bytes of a w x h tile in; RGB bytes of (w·scale) x (h·scale) out. Synchronous work inside. */
  upscale(rgb: Uint8Array, width: number, height: number): Promise<Uint8Array>;
}

type Tf = typeof TfCore;

const requireHere = createRequire(import.meta.url);

/** The installed package's root: its `exports` hide package.json, so walk up from its entry. */
function packageRoot(name: string): string {
  let dir = dirname(requireHere.resolve(name));
  while (!dir.endsWith(join('node_modules', name))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the directory of the installed package ${name}`);
    dir = up;
  }
  return dir;
}

let backend: Promise<Tf> | undefined;

/** TensorFlow.js on the wasm backend, initialised once per process. */
function tensorflow(): Promise<Tf> {
  backend ??= (async () => {
    const tf = await import('@tensorflow/tfjs-core');
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    wasm.setWasmPaths(join(packageRoot('@tensorflow/tfjs-backend-wasm'), 'dist') + '/');
    if (!(await tf.setBackend('wasm'))) throw new Error('the TensorFlow.js wasm backend did not start');
    await tf.ready();
    return tf;
  })();
  backend.catch(() => (backend = undefined));
  return backend;
}

const models = new Map<EsrganScale, Promise<EsrganModel>>();

interface ModelJson {
  modelTopology: object;
  weightsManifest: { paths: string[]; weights: TfCore.io.WeightsManifestEntry[] }[];
}

async function load(scale: EsrganScale): Promise<EsrganModel> {
  const tf = await tensorflow();
  const { loadLayersModel } = await import('@tensorflow/tfjs-layers');
  const dir = join(packageRoot('@upscalerjs/esrgan-slim'), 'models', `x${scale}`);
  const json = JSON.parse(await readFile(join(dir, 'model.json'), 'utf8')) as ModelJson;
  const shards = await Promise.all(json.weightsManifest.flatMap((g) => g.paths.map((p) => readFile(join(dir, p)))));
  const weights = Buffer.concat(shards);
  const model: LayersModel = await loadLayersModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
      weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.byteLength),
    }),
  );
  return {
    scale,
    async upscale(rgb, width, height) {
      const out = tf.tidy(() => {
        const input = tf.tensor4d(Float32Array.from(rgb), [1, height, width, 3]);
        const y = model.predict(input) as TfCore.Tensor;
        return tf.cast(tf.round(tf.clipByValue(y, 0, 255)), 'int32');
      });
      try {
        return Uint8Array.from(await out.data());
      } finally {
        out.dispose();
      }
    },
  };
}

/** The model of `scale`, loaded once per process and kept. */
export function esrgan(scale: EsrganScale): Promise<EsrganModel> {
  let model = models.get(scale);
  if (!model) {
    model = load(scale);
    models.set(scale, model);
    model.catch(() => models.delete(scale));
  }
  return model;
}
