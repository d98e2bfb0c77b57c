import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { formatMicros } from '../../lib/time.js';
import { storedUrlAt } from '../../lib/urls.js';
import { MAX_TRAINING_IMAGES } from '../../models/style/lora-training.js';
import { Nullable, Uri, closed } from '../../models/schema-kit.js';
import type { StyleRecord } from '../../store/style-store.js';
import { Cursor } from '../common/paging.js';

/**
 * Styles as the API shows them, declared once: the routes' schemas (OpenAPI components by `$id`)
 * and, by `Static`, the service's types. Field names follow the original API's published document
 * (docs/styles.md).
 */
const STYLE_ID = '8d1f3a52-6c0e-4b7a-9f21-3e5d7c9b1a40';
const COVER = 'https://mediagen.example/outputs/q8ZxE1m0uR3b9VwK2sTnYc4LdPfAh7Jg/cover.png';
const EXAMPLE = {
  id: STYLE_ID,
  title: 'Ink wash',
  urls: [COVER],
  public: false,
  cover_url: COVER,
  prompt: 'inkwash',
  models: ['flux_dev'],
  owner: { id: '1e2d3c4b-5a69-4f7e-8d9c-0b1a2c3d4e5f', name: 'default', avatar_url: null },
  like_count: 0,
  created_at: '2026-11-25T09:30:00.000000Z',
};

export const Style = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The style identifier: use it in `styles[].id` of model-a-2', examples: [STYLE_ID] }),
    title: Nullable(Type.String({ description: "The style's name (the training request's `name`, or as PATCHed)", examples: [EXAMPLE.title] })),
    urls: Type.Array(Type.String({ format: 'uri' }), { description: 'Preview images: at first the cover the training made', examples: [EXAMPLE.urls] }),
    public: Type.Boolean({ description: 'Whether every workspace may see and use it', examples: [false] }),
    cover_url: Nullable(Type.String({ format: 'uri', description: 'The cover image: the training job\'s main output, unless PATCHed', examples: [COVER] })),
    prompt: Type.String({ description: 'A suggested prompt: the trigger word, or empty when the training named none', examples: [EXAMPLE.prompt] }),
    models: Type.Array(Type.String(), { description: 'The base model it was trained for (flux_dev, wan, ...); it applies on every endpoint that takes `styles`', examples: [EXAMPLE.models] }),
    owner: Type.Object(
      {
        id: Type.String({ format: 'uuid', description: "The owning workspace's API user (spec 5.5)", examples: [EXAMPLE.owner.id] }),
        name: Type.String({ description: "The owning workspace's name", examples: [EXAMPLE.owner.name] }),
        avatar_url: Nullable(Type.String({ format: 'uri' }), { description: 'Always null: API users have no avatar', examples: [null] }),
      },
      { description: 'Who owns the style: the API identity of the workspace it was trained in', examples: [EXAMPLE.owner] },
    ),
    like_count: Type.Number({ description: 'Likes: always 0 on this server', examples: [0] }),
    created_at: Type.String({ format: 'date-time', description: 'When training completed and the style was created (UTC, microseconds)', examples: [EXAMPLE.created_at] }),
  },
  { $id: 'Style', description: 'A style (LoRA) made by a training job', examples: [EXAMPLE] },
);
export type StyleView = Static<typeof Style>;

export const StylePage = Type.Object(
  {
    items: Type.Array(Style, { description: 'Styles, newest first' }),
    next_cursor: Cursor('style creation time'),
  },
  { $id: 'StylePage', description: 'A page of styles (as GET /jobs pages)', examples: [{ items: [EXAMPLE], next_cursor: null }] },
);
export type StylePageView = Static<typeof StylePage>;

const PATCH_EXAMPLE = { title: 'Ink wash, soft', public: true };

export const StylePatchRequest = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A new name, 1 to 200 characters', examples: [PATCH_EXAMPLE.title] })),
    public: Type.Optional(Nullable(Type.Boolean(), { description: 'true: every workspace may see and use it; null leaves it as it is', examples: [true] })),
    urls: Type.Optional(
      Type.Array(Uri('A preview image: an http(s) URL or a base64 data URI.', { examples: [COVER] }), {
        maxItems: MAX_TRAINING_IMAGES,
        description: `New preview images, at most ${MAX_TRAINING_IMAGES}`,
        examples: [[COVER]],
      }),
    ),
    cover_url: Type.Optional(Uri('A new cover image: an http(s) URL or a base64 data URI.', { examples: [COVER] })),
  },
  { ...closed, description: 'The fields to change; at least one', examples: [PATCH_EXAMPLE] },
);

export const ShareLink = Type.Object(
  {
    share_link: Type.String({ format: 'uri', description: "The style's URL (GET /styles/{id}): it opens for whoever may see the style", examples: [`https://mediagen.example/styles/${STYLE_ID}`] }),
    is_new: Type.Boolean({ description: 'Whether this request made the link (201) rather than reading it (200)', examples: [true] }),
  },
  { $id: 'StyleShareLink', description: 'A shareable link for a style', examples: [{ share_link: `https://mediagen.example/styles/${STYLE_ID}`, is_new: true }] },
);
export type ShareLinkView = Static<typeof ShareLink>;

const SHARED_EXAMPLE = { success: true, style_id: STYLE_ID, workspace: { id: '6f7e8d9c-0b1a-4c3d-9e5f-a1b2c3d4e5f6', name: 'default', is_default: true } };

export const SharedStyle = Type.Object(
  {
    success: Type.Literal(true, { description: 'Always true' }),
    style_id: Type.String({ format: 'uuid', description: 'The shared style', examples: [STYLE_ID] }),
    workspace: Type.Object(
      {
        id: Type.String({ format: 'uuid', description: 'The workspace', examples: [SHARED_EXAMPLE.workspace.id] }),
        name: Nullable(Type.String({ description: "The workspace's name", examples: ['default'] })),
        is_default: Type.Boolean({ description: "Always true: a token acts in its one workspace", examples: [true] }),
      },
      { description: 'The workspace the style is now shared with', examples: [SHARED_EXAMPLE.workspace] },
    ),
  },
  { $id: 'SharedStyle', description: "The style is shared with the token's workspace", examples: [SHARED_EXAMPLE] },
);
export type SharedStyleView = Static<typeof SharedStyle>;

export const UnsharedStyle = Type.Object(
  { success: Type.Literal(true, { description: 'Always true' }) },
  { $id: 'UnsharedStyle', description: "The style is no longer shared with the workspace: only its trainer's tokens see it", examples: [{ success: true }] },
);
export type UnsharedStyleView = Static<typeof UnsharedStyle>;

export function toStyleView(style: StyleRecord, ownerName: string, publicUrl: string): StyleView {
  return {
    id: style.id,
    title: style.title,
    urls: style.urls.map((u) => storedUrlAt(u, publicUrl)),
    public: style.public,
    cover_url: style.coverUrl === null ? null : storedUrlAt(style.coverUrl, publicUrl),
    prompt: style.triggerWord ?? '',
    models: [style.model],
    owner: { id: style.apiUserId, name: ownerName, avatar_url: null },
    like_count: style.likeCount,
    created_at: formatMicros(style.createdAt),
  };
}
