import { resolveUrl } from '../../lib/urls.js';
import { isOutputKey, isOutputName, outputUrlPath } from '../../outputs/output-store.js';

/**
 * Where asset files are served, and how an asset's URL is recognised when a generation request
 * names it. One place spells the path: the route, the asset view, the creation check and the
 * worker's input loader all read it here.
 */
export const ASSET_FILES_PATH = '/assets/files';

/** The file of an asset, as its URL names it. */
export interface AssetFileRef {
  readonly key: string;
  readonly name: string;
}

/** The asset's `image_url`: its file under the server's public URL (path prefix kept). */
export function assetUrl(publicUrl: string, ref: AssetFileRef): string {
  return resolveUrl(outputUrlPath(ref.key, ref.name, ASSET_FILES_PATH).slice(1), publicUrl);
}

/**
 * The key and name when `url` has the shape of an asset file URL (any host: the key, 192 random
 * bits, is what identifies it), else undefined. Whether such an asset exists is the store's to say.
 */
export function parseAssetUrl(url: string): AssetFileRef | undefined {
  if (!/^https?:\/\//i.test(url)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') return undefined;
  // `<any prefix>/assets/files/<key>/<name>`: the key and name as the output store spells them.
  const segments = parsed.pathname.split('/');
  const [name, key] = [segments.pop() ?? '', segments.pop() ?? ''];
  if (!segments.join('/').endsWith(ASSET_FILES_PATH) || !isOutputKey(key) || !isOutputName(name)) return undefined;
  return { key, name };
}

/** Whether `url` is under this server's public URL (origin and path prefix). */
export function isUnderPublicUrl(url: string, publicUrl: string): boolean {
  try {
    const u = new URL(url);
    const base = new URL(publicUrl.endsWith('/') ? publicUrl : `${publicUrl}/`);
    return u.origin === base.origin && u.pathname.startsWith(base.pathname);
  } catch {
    return false;
  }
}
