import type { ModelModule } from './model.js';
import { MODEL_K1 } from './3d/model-k-1.js';
import { MODEL_A2 } from './image/model-a-2.js';
import { MODEL_B1 } from './image/model-b-1.js';
import { MODEL_C_EDIT } from './video/model-c-edit.js';
import { MODEL_D_FAST } from './video/model-d-fast.js';
import { MODEL_E1 } from './video/model-e-1.js';
import { MODEL_F } from './video/model-f.js';
import { MODEL_L1 } from './audio/model-l-1.js';
import { GENERATIVE_ENHANCE, STANDARD_ENHANCE } from './image/vendor-j-enhance.js';
import { MODEL_VIDEO_UPSCALE } from './video/video-upscale.js';
import { RETIRED } from './retired.js';
import { LORA_TRAINING } from './style/lora-training.js';

/**
 * Every model this server knows, in the order routes, OpenAPI and listings show them. Adding a
 * model is one file under image/, video/, ... and one line here (docs/architecture.md).
 */
export const MODELS: readonly ModelModule[] = Object.freeze([
  ...MODEL_A2,
  MODEL_B1,
  MODEL_C_EDIT,
  MODEL_D_FAST,
  MODEL_E1,
  MODEL_F,
  MODEL_L1,
  STANDARD_ENHANCE,
  GENERATIVE_ENHANCE,
  MODEL_K1,
  MODEL_VIDEO_UPSCALE,
  LORA_TRAINING,
  ...RETIRED,
]);
