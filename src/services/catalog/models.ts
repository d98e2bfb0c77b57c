import type { TObject } from '@sinclair/typebox';
import type { FieldAlias } from './aliases.js';
import {
  ModelA2Request,
  ModelB1Request,
  ModelCEditRequest,
  ModelDFastRequest,
  ModelE1Request,
  ModelFRequest,
} from './request-schemas.js';

/** Deprecated camelCase aliases (spec 4.2) are accepted until this date. */
export const ALIAS_SUNSET_DATE = '2026-06-19';

export type EngineKind = 'image' | 'video';

/** One model as data: routes, validation, pricing, OpenAPI and deprecation all derive from it. */
export interface ModelSpec {
  /** Also the job `type`, e.g. image/vendor-a/model-a-2/medium; served at POST /generate/{path}. */
  readonly path: string;
  readonly summary: string;
  readonly engine: EngineKind;
  /** Absent for retired models whose request shape the spec does not show. */
  readonly request?: TObject;
  readonly aliases: readonly FieldAlias[];
  readonly zeroDataRetention: boolean;
  readonly deprecation?: {
    readonly sunsetDate: string;
    readonly replacement?: string;
    readonly migrationUrl?: string;
  };
}

const alias = (a: string, field: string): FieldAlias => ({ alias: a, field });
const modelA2Aliases = [alias('presetStyles', 'styles'), alias('imageStyleRefs', 'image_style_references')];

const modelA2 = (variant: string, summary: string): ModelSpec => ({
  path: `image/vendor-a/model-a-2/${variant}`,
  summary,
  engine: 'image',
  request: ModelA2Request,
  aliases: modelA2Aliases,
  zeroDataRetention: true,
});

export const MODELS: readonly ModelSpec[] = Object.freeze([
  modelA2('medium', 'Generate an image with model-a-2 (medium)'),
  modelA2('large', 'Generate an image with model-a-2 (large)'),
  modelA2('medium-turbo', 'Generate an image with model-a-2 (medium-turbo)'),
  {
    path: 'image/vendor-b/model-b-1',
    summary: 'Generate an image with model-b-1',
    engine: 'image',
    request: ModelB1Request,
    aliases: [alias('outputFormat', 'output_format'), alias('webSearch', 'web_search'), alias('styleImages', 'style_images')],
    zeroDataRetention: false,
  },
  {
    path: 'video/vendor-c/model-c-edit',
    summary: 'Edit a video with model-c-edit',
    engine: 'video',
    request: ModelCEditRequest,
    aliases: [],
    zeroDataRetention: false,
  },
  {
    path: 'video/vendor-d/model-d-fast',
    summary: 'Generate a video with model-d-fast',
    engine: 'video',
    request: ModelDFastRequest,
    aliases: [alias('startImage', 'start_image'), alias('aspectRatio', 'aspect_ratio'), alias('generateAudio', 'generate_audio')],
    zeroDataRetention: false,
  },
  {
    path: 'video/vendor-e/model-e-1',
    summary: 'Generate a video with model-e-1',
    engine: 'video',
    request: ModelE1Request,
    aliases: [
      alias('startImage', 'start_image'),
      alias('aspectRatio', 'aspect_ratio'),
      alias('cameraControl', 'camera_control'),
      alias('endImage', 'end_image'),
    ],
    zeroDataRetention: false,
  },
  {
    path: 'video/vendor-f/model-f',
    summary: 'Generate a video with model-f',
    engine: 'video',
    request: ModelFRequest,
    aliases: [alias('startImage', 'start_image'), alias('expandPrompt', 'expand_prompt')],
    zeroDataRetention: false,
  },
  // Retired models of spec section 9: they exist only to answer 410.
  {
    path: 'image/vendor-g/model-g-3',
    summary: 'Retired: use image/vendor-g/model-g-5-lite',
    engine: 'image',
    aliases: [],
    zeroDataRetention: false,
    deprecation: { sunsetDate: '2026-05-13', replacement: 'image/vendor-g/model-g-5-lite' },
  },
  {
    path: 'video/vendor-g/model-h-1.0-lite',
    summary: 'Retired: use video/vendor-g/model-h-1.0-pro-fast',
    engine: 'video',
    aliases: [],
    zeroDataRetention: false,
    deprecation: { sunsetDate: '2026-04-27', replacement: 'video/vendor-g/model-h-1.0-pro-fast' },
  },
  {
    path: 'video/vendor-i/model-i-2',
    summary: 'Retired, with no replacement',
    engine: 'video',
    aliases: [],
    zeroDataRetention: false,
    deprecation: { sunsetDate: '2026-04-27' },
  },
]);
