import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as TfCore from '@tensorflow/tfjs-core';
import type * as TfLayers from '@tensorflow/tfjs-layers';
import type { LayersModel } from '@tensorflow/tfjs-layers';

/**
 * ESRGAN (UpscalerJS's generators trained on DIV2K, MIT, by Kevin Scott: the RDN "slim" and
 * "medium" and the RRDN "thick", weights in `@upscalerjs/esrgan-<size>`) on
 * TensorFlow.js with its WebAssembly backend. Imported only by `neural-upscale.ts` through a
 * dynamic import, so a process that never upscales never loads TensorFlow.js.
 *
 * Nothing is fetched: the backend's `.wasm` files are read from `@tensorflow/tfjs-backend-wasm`'s
 * `dist/` and each model's `model.json` and weight shards from the installed package's
 * `models/x<scale>/`, handed to `loadLayersModel` in memory (`tf.io.fromMemory`). UpscalerJS's own
 * `upscaler` package is not used: on Node it wants `@tensorflow/tfjs-node` (a downloaded native
 * binary). The RDN models take and give RGB in 0..255, the RRDN model in 0..1 (each package's
 * `inputRange`/`outputRange`), NHWC, any size; the RRDN model has two layers of its own
 * (`MultiplyBeta`, `PixelShuffle<s>x`), registered here as its package's `setup` does.
 */

export type EsrganScale = 2 | 3 | 4 | 8;
/** The scales every `@upscalerjs/esrgan-*` package ships weights for. */
export const ESRGAN_SCALES: readonly EsrganScale[] = [2, 3, 4, 8];

/** The three generators, smallest first: 0.9, 2.8 and 28 MB of weights a scale. */
export type EsrganSize = 'slim' | 'medium' | 'thick';
export const ESRGAN_SIZES: readonly EsrganSize[] = ['slim', 'medium', 'thick'];

export interface EsrganModel {
  readonly size: EsrganSize;
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

const models = new Map<string, Promise<EsrganModel>>();

interface ModelJson {
  modelTopology: object;
  weightsManifest: { paths: string[]; weights: TfCore.io.WeightsManifestEntry[] }[];
}

type Layers = typeof TfLayers;

/**
 * The RRDN's own layers, as `@upscalerjs/esrgan-thick` 1.0.0 defines them (its `setup`, in
 * `packages/shared/src/esrgan/esrgan.js`): the residual scaling by 0.2 and the sub-pixel shuffle.
 */
function registerRrdnLayers(tf: Tf, layers: Layers['layers'], scale: EsrganScale): void {
  const first = (inputs: TfCore.Tensor | TfCore.Tensor[]) => (Array.isArray(inputs) ? inputs[0]! : inputs);
  class MultiplyBeta extends layers.Layer {
    static className = 'MultiplyBeta';
    constructor() {
      super({});
    }
    override call(inputs: TfCore.Tensor | TfCore.Tensor[]): TfCore.Tensor {
      return tf.mul(first(inputs), 0.2);
    }
  }
  class PixelShuffle extends layers.Layer {
    static className = `PixelShuffle${scale}x`;
    constructor() {
      super({});
    }
    override computeOutputShape(shape: TfLayers.Shape | TfLayers.Shape[]): TfLayers.Shape {
      const s = (Array.isArray(shape[0]) ? shape[0] : shape) as TfLayers.Shape;
      return [s[0]!, s[1]!, s[2]!, 3];
    }
    override call(inputs: TfCore.Tensor | TfCore.Tensor[]): TfCore.Tensor {
      return tf.depthToSpace(first(inputs) as TfCore.Tensor4D, scale, 'NHWC');
    }
  }
  tf.serialization.registerClass(MultiplyBeta);
  tf.serialization.registerClass(PixelShuffle);
}

async function load(size: EsrganSize, scale: EsrganScale): Promise<EsrganModel> {
  const tf = await tensorflow();
  const { layers, loadLayersModel } = await import('@tensorflow/tfjs-layers');
  // The RRDN works in 0..1; the RDNs in 0..255.
  const range = size === 'thick' ? 255 : 1;
  if (size === 'thick') registerRrdnLayers(tf, layers, scale);
  const dir = join(packageRoot(`@upscalerjs/esrgan-${size}`), 'models', `x${scale}`);
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
    size,
    scale,
    async upscale(rgb, width, height) {
      const out = tf.tidy(() => {
        const input = tf.tensor4d(Float32Array.from(rgb, (v) => v / range), [1, height, width, 3]);
        const y = model.predict(input) as TfCore.Tensor;
        return tf.cast(tf.round(tf.clipByValue(range === 1 ? y : tf.mul(y, range), 0, 255)), 'int32');
      });
      try {
        return Uint8Array.from(await out.data());
      } finally {
        out.dispose();
      }
    },
  };
}

/** The `size` generator's model of `scale`, loaded once per process and kept. */
export function esrgan(scale: EsrganScale, size: EsrganSize = 'slim'): Promise<EsrganModel> {
  const key = `${size}x${scale}`;
  let model = models.get(key);
  if (!model) {
    model = load(size, scale);
    models.set(key, model);
    model.catch(() => models.delete(key));
  }
  return model;
}
