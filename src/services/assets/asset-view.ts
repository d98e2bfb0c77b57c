import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { formatMicros } from '../../lib/time.js';
import type { AssetRecord } from '../../store/asset-store.js';
import { assetUrl } from './asset-urls.js';
import { Cursor } from '../common/paging.js';

/**
 * An asset as the API shows it, declared once: the routes' response schemas (OpenAPI components
 * by `$id`) and, by `Static`, the service's return types. Field names and types follow the
 * original API's published document (docs/assets.md).
 */
const EXAMPLE = {
  id: '3c90c3cc-0d44-4b50-8888-8dd25736052a',
  image_url: 'https://mediagen.example/assets/files/q8ZxE1m0uR3b9VwK2sTnYc4LdPfAh7Jg/asset.png',
  uploaded_at: '2026-11-25T09:30:00.000000Z',
  width: 1024,
  height: 768,
  size_bytes: 482133,
  mime_type: 'image/png',
  description: 'Product shot, front',
  metadata: { kind: 'image', filename: 'front.png' },
};

export const Asset = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The asset identifier', examples: [EXAMPLE.id] }),
    image_url: Type.String({
      format: 'uri',
      description: "Where the file is served; give it in any URL field of a generation request (read from the server's store, never fetched)",
      examples: [EXAMPLE.image_url],
    }),
    uploaded_at: Type.String({ format: 'date-time', description: 'When it was uploaded (UTC, microseconds)', examples: [EXAMPLE.uploaded_at] }),
    width: Type.Union([Type.Number(), Type.Null()], { description: 'Pixels across, as displayed; null for audio and 3D models', examples: [EXAMPLE.width] }),
    height: Type.Union([Type.Number(), Type.Null()], { description: 'Pixels down, as displayed; null for audio and 3D models', examples: [EXAMPLE.height] }),
    size_bytes: Type.Number({ description: 'The file size in bytes', examples: [EXAMPLE.size_bytes] }),
    mime_type: Type.String({ description: 'The media type, from the file\'s bytes (not the name or Content-Type it was sent with)', examples: [EXAMPLE.mime_type] }),
    description: Type.Optional(Type.String({ description: 'The description given at upload; absent when none was', examples: [EXAMPLE.description] })),
    metadata: Type.Object(
      {
        kind: Type.String({ description: 'image, video, audio or model (a 3D model)', examples: ['image'] }),
        duration_seconds: Type.Optional(Type.Number({ description: 'Length of a video or audio file', examples: [4.5] })),
        filename: Type.Optional(Type.String({ description: 'The file name the client sent, for display only', examples: ['front.png'] })),
      },
      { description: 'What else is known of the file', examples: [EXAMPLE.metadata] },
    ),
  },
  { $id: 'Asset', description: 'An uploaded file a generation request can name by its URL', examples: [EXAMPLE] },
);
export type AssetView = Static<typeof Asset>;

export const AssetPage = Type.Object(
  {
    items: Type.Array(Asset, { description: 'Assets, newest first' }),
    next_cursor: Cursor('upload time'),
  },
  { $id: 'AssetPage', description: 'A page of assets (as GET /jobs pages)', examples: [{ items: [EXAMPLE], next_cursor: null }] },
);
export type AssetPageView = Static<typeof AssetPage>;

export const DeletedAsset = Type.Object(
  {
    success: Type.Literal(true, { description: 'Always true (the original API: `{success, message}`)' }),
    message: Type.String({ description: 'What happened, in words', examples: ['asset deleted'] }),
    id: Type.String({ format: 'uuid', description: 'The deleted asset', examples: [EXAMPLE.id] }),
    deleted: Type.Literal(true, { description: 'Always true' }),
  },
  { $id: 'DeletedAsset', description: 'The asset is gone; its URL stopped being served', examples: [{ success: true, message: 'asset deleted', id: EXAMPLE.id, deleted: true }] },
);
export type DeletedAssetView = Static<typeof DeletedAsset>;

export function toAssetView(asset: AssetRecord, publicUrl: string): AssetView {
  return {
    id: asset.id,
    image_url: assetUrl(publicUrl, { key: asset.outputKey, name: asset.fileName }),
    uploaded_at: formatMicros(asset.createdAt),
    width: asset.width,
    height: asset.height,
    size_bytes: asset.sizeBytes,
    mime_type: asset.mimeType,
    ...(asset.description !== null ? { description: asset.description } : {}),
    metadata: asset.metadata as AssetView['metadata'],
  };
}
