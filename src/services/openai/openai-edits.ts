import type { AuthContext } from '../identity/identity.js';
import type { AssetService, StagedUpload } from '../assets/assets.js';
import type { GenerationOptions, GenerationPolicy } from '../jobs/generation.js';
import { paramError, toModelBody } from './openai-fields.js';
import { readImageRequest } from './openai-image-request.js';
import { placeImages } from './openai-inputs.js';
import type { ImagesAnswer, OpenAiImages } from './openai-images.js';

/** An edit's files as the transport staged them (streamed to the store, not yet assets). */
export interface EditUploads {
  readonly images: readonly { readonly staged: StagedUpload; readonly filename?: string }[];
  readonly mask?: { readonly staged: StagedUpload; readonly filename?: string };
}

/** OpenAI's limit on an edit's images. */
export const MAX_EDIT_IMAGES = 16;

/**
 * POST /v1/images/edits: the uploaded images become assets of the caller's workspace (the model
 * reads them from this server's store; no URL the caller gave is ever fetched), then the request
 * runs as a generation with them in the model's image input(s) (openai-inputs.ts). Everything the
 * request can be refused for without the files is checked before they are kept, so a refused edit
 * leaves no assets behind.
 */
export class OpenAiEdits {
  readonly #images: OpenAiImages;
  readonly #assets: AssetService;

  constructor(images: OpenAiImages, assets: AssetService) {
    this.#images = images;
    this.#assets = assets;
  }

  async create(caller: AuthContext, form: Record<string, string>, uploads: EditUploads, options: GenerationOptions, policy: GenerationPolicy, signal: AbortSignal): Promise<ImagesAnswer> {
    const all = [...uploads.images, ...(uploads.mask ? [uploads.mask] : [])];
    let kept = 0;
    try {
      const req = readImageRequest(form, 'edits');
      if (uploads.images.length === 0) throw paramError('image', "an edit needs an image: send it as the file 'image' (or several as 'image[]')");
      if (uploads.images.length > MAX_EDIT_IMAGES) throw paramError('image', `at most ${MAX_EDIT_IMAGES} images per edit`);
      // The model and the mapping are checked with stand-in URLs before any file is kept.
      const entry = this.#images.model(req);
      const trial = toModelBody(entry, req.fields).body;
      placeImages(entry, trial, uploads.images.map((_, i) => `https://stand-in.invalid/${i}`), uploads.mask ? 'https://stand-in.invalid/mask' : undefined);
      const urls: string[] = [];
      for (const [i, upload] of all.entries()) {
        const isMask = uploads.mask !== undefined && i === all.length - 1;
        const param = isMask ? 'mask' : 'image';
        // A retry with the same Idempotency-Key keeps the same assets, so its jobs' bodies match and replay.
        const key = options.idempotencyKey === null ? null : `${options.idempotencyKey}#${isMask ? 'mask' : `image-${i + 1}`}`;
        if (key !== null && key.length > 255) throw paramError(param, 'Idempotency-Key is too long for an edit: keep it within 240 characters');
        kept = i + 1;
        const { asset } = await this.#assets
          .commit(caller, upload.staged, { ...(upload.filename ? { filename: upload.filename } : {}), idempotencyKey: key }, policy.publicUrl, signal)
          .catch((err: unknown) => {
            throw err instanceof Error && 'code' in err && (err as { code: unknown }).code === 'invalid_request' ? paramError(param, (err as Error).message.replace(/^the file/, `the ${param} file`)) : err;
          });
        if (asset.metadata.kind !== 'image') {
          await this.#assets.delete(caller, asset.id, { warn: () => undefined }).catch(() => undefined);
          throw paramError(param, `the ${param} file is ${asset.metadata.kind === 'model' ? 'a 3D model' : `a ${asset.metadata.kind} file`}, not an image (PNG, JPEG or WebP)`);
        }
        urls.push(asset.image_url);
      }
      const maskUrl = uploads.mask ? urls.pop() : undefined;
      return await this.#images.create(caller, req, options, policy, signal, { imageUrls: urls, ...(maskUrl ? { maskUrl } : {}) });
    } finally {
      // What was not made an asset (a refusal before it, or a commit that threw) is removed.
      for (const upload of all.slice(kept)) await upload.staged.discard().catch(() => undefined);
    }
  }
}
