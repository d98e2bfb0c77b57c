import type { MappableModel } from './openai-fields.js';
import { enumOf, paramError } from './openai-fields.js';

type Prop = Readonly<Record<string, unknown>>;

/** Names of a model's one-image input, most specific first (an edit's source, a video's first frame). */
const IMAGE_FIELDS = ['image_url', 'image', 'input_image', 'init_image_url', 'init_image', 'start_image', 'first_frame_image'];
/** Names of a model's several-image input: an array of URLs. */
const IMAGE_LIST_FIELDS = ['image_urls', 'images', 'input_images', 'reference_images'];
/** Names of a model's mask input. */
const MASK_FIELDS = ['mask_url', 'mask', 'mask_image', 'mask_image_url'];

const isUrlString = (p: Prop | undefined): boolean => {
  if (!p) return false;
  if (p.type === 'string') return enumOf(p) === undefined;
  const union = (p.anyOf ?? p.oneOf) as Prop[] | undefined;
  return Array.isArray(union) && union.some((m) => m.type === 'string' && enumOf(m) === undefined);
};

/** The model's image inputs, by the names above: where an uploaded image or mask goes. */
export function imageInputs(model: MappableModel): { single?: string; list?: { name: string; max?: number }; mask?: string } {
  const props = (model.request?.properties ?? {}) as Record<string, Prop>;
  const single = IMAGE_FIELDS.find((f) => isUrlString(props[f]));
  const listName = IMAGE_LIST_FIELDS.find((f) => props[f]?.type === 'array' && isUrlString(props[f]!.items as Prop | undefined));
  const mask = MASK_FIELDS.find((f) => isUrlString(props[f]));
  const max = listName ? (props[listName]!.maxItems as number | undefined) : undefined;
  return {
    ...(single ? { single } : {}),
    ...(listName ? { list: { name: listName, ...(max !== undefined ? { max } : {}) } } : {}),
    ...(mask ? { mask } : {}),
  };
}

/**
 * The uploaded images' URLs (this server's asset URLs) into the model's image input(s): one image
 * to its one-image field, several to its list field; a mask to its mask field. What the model
 * cannot take is a 400 naming `param` (`image`, or `mask`), never dropped. `param` lets the
 * videos door name its own field (`input_reference`).
 */
export function placeImages(model: MappableModel, body: Record<string, unknown>, urls: readonly string[], mask?: string, param = 'image'): void {
  const inputs = imageInputs(model);
  if (urls.length > 0) {
    if (inputs.list && (urls.length > 1 || !inputs.single)) {
      if (inputs.list.max !== undefined && urls.length > inputs.list.max) throw paramError(param, `${model.path} takes at most ${inputs.list.max} images; ${urls.length} were sent`);
      body[inputs.list.name] = [...urls];
    } else if (inputs.single) {
      if (urls.length > 1) throw paramError(param, `${model.path} takes one input image; ${urls.length} were sent`);
      body[inputs.single] = urls[0];
    } else {
      throw paramError(param, `${model.path} takes no input image`);
    }
  }
  if (mask !== undefined) {
    if (!inputs.mask) throw paramError('mask', `${model.path} takes no mask; send the edit without one`);
    body[inputs.mask] = mask;
  }
}
