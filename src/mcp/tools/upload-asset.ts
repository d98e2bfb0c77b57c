import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { invalid } from '../../domain/error-catalogue.js';
import { FetchError, fetchInput } from '../../lib/safe-fetch.js';
import { MAX_DESCRIPTION_CHARS, tooLargeUpload } from '../../services/assets/asset-rules.js';
import { Asset } from '../../services/assets/asset-view.js';
import type { McpDeps, ToolContext } from '../tool.js';
import { defineTool } from '../tool.js';
import { checkedKey } from './job-options.js';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;

/** The file's bytes from base64, refused before decoding when it is plainly too large. */
function decodeBase64(text: string, maxBytes: number): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (Math.floor((compact.length * 3) / 4) - 2 > maxBytes) throw tooLargeUpload(maxBytes);
  if (compact.length === 0 || !BASE64.test(compact)) throw invalid("'content_base64' is not valid base64 (RFC 4648, standard alphabet)");
  return Buffer.from(compact, 'base64');
}

/**
 * The file at a URL, fetched as job inputs are: the address guard at connect time (refusing this
 * server's own network unless --allow-private-urls), every redirect checked, the upload size cap
 * and the input time limit.
 */
async function fetched(deps: McpDeps, url: string, ctx: ToolContext): Promise<Buffer> {
  const maxBytes = deps.assets.policy.maxBytes;
  try {
    const got = await fetchInput(url, { allowPrivate: deps.allowPrivateUrls, maxBytes, timeoutMs: deps.fetchTimeoutMs, signal: ctx.signal });
    return got.data;
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    if (err.reason === 'too_large') throw tooLargeUpload(maxBytes);
    throw invalid(`url: ${err.message}`);
  }
}

/** The last segment of a URL's path, as the name a form upload would carry. */
function nameIn(url: string): string | undefined {
  try {
    const last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    return last || undefined;
  } catch {
    return undefined;
  }
}

export const uploadAsset = defineTool({
  name: 'upload_asset',
  title: 'Upload an asset',
  description:
    'Stores a file (image, video, audio or GLB 3D model) in your workspace and returns the asset; give its `image_url` in any URL ' +
    'field of a generate input. Send the bytes as `content_base64` with a `filename`, or a `url` the server fetches (public ' +
    'http(s) addresses only). The kind is read from the bytes; the size limit and the workspace storage quota apply.',
  input: Type.Object(
    {
      content_base64: Type.Optional(Type.String({ description: 'The file, base64-encoded (standard alphabet)' })),
      url: Type.Optional(Type.String({ format: 'uri', description: 'Where the server fetches the file from instead (http or https)' })),
      filename: Type.Optional(Type.String({ maxLength: 255, description: 'The file name, for display only', examples: ['front.png'] })),
      description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION_CHARS, description: 'What the file shows, for you', examples: ['Product shot, front'] })),
      idempotency_key: Type.Optional(Type.String({ description: 'Makes a retry safe: the same key with the same file answers the first asset' })),
    },
    { additionalProperties: false },
  ),
  output: Asset,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async run(deps, input, ctx) {
    if ((input.content_base64 === undefined) === (input.url === undefined)) throw invalid("give exactly one of 'content_base64' and 'url'");
    const idempotencyKey = checkedKey(input.idempotency_key);
    await deps.readiness.assertCanStore('store new uploads');
    const bytes = input.url !== undefined ? await fetched(deps, input.url, ctx) : decodeBase64(input.content_base64!, deps.assets.policy.maxBytes);
    // The same two steps as POST /assets: staged (size limit, quota pre-check), then inspected and committed.
    const staged = await deps.assets.stage(ctx.caller, Readable.from([bytes]), ctx.signal);
    const filename = input.filename ?? (input.url !== undefined ? nameIn(input.url) : undefined);
    const { asset } = await deps.assets.commit(ctx.caller, staged, { description: input.description, filename, idempotencyKey }, ctx.publicUrl, ctx.signal);
    return { structured: asset };
  },
});
