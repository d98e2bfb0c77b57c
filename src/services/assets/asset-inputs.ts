import { invalid } from '../../domain/error-catalogue.js';
import type { UrlInput } from '../../models/private-urls.js';
import type { AssetStore } from '../../store/asset-store.js';
import { isUnderPublicUrl, parseAssetUrl } from './asset-urls.js';
import type { AssetFileRef } from './asset-urls.js';

/** A URL field of a request body that has the shape of an asset file URL. */
export interface AssetInput {
  readonly field: string;
  readonly url: string;
  readonly ref: AssetFileRef;
}

/** The body's URLs (`urlInputsOf`) that look like asset URLs (a syntactic test; the store decides). */
export function assetInputsOf(inputs: readonly UrlInput[]): AssetInput[] {
  return inputs.flatMap(({ field, url }) => {
    const ref = parseAssetUrl(url);
    return ref ? [{ field, url, ref }] : [];
  });
}

/**
 * Which of `inputs` are assets of this server the workspace may use, by URL; refuses the rest
 * with invalid_request naming the field. An input is this server's asset when its key is stored
 * (whatever host the client reached the server by). One under this server's public URL whose key
 * is not stored names a deleted or unknown asset, and is refused; one elsewhere is an ordinary URL
 * of some other server and left to the usual rules. Another workspace's asset reads as unknown, so
 * its existence is not given away.
 */
export async function checkAssetInputs(
  assets: Pick<AssetStore, 'findAssetByKey'>,
  workspaceId: string,
  inputs: readonly AssetInput[],
  publicUrl: string,
): Promise<Set<string>> {
  const ours = new Set<string>();
  for (const { field, url, ref } of inputs) {
    const asset = await assets.findAssetByKey(ref.key);
    const known = asset !== undefined && asset.workspaceId === workspaceId && asset.fileName === ref.name;
    if (known && asset.deletedAt === null) {
      ours.add(url);
    } else if (known) {
      throw invalid(`${field} names an asset that was deleted; upload the file again`);
    } else if (asset !== undefined || isUnderPublicUrl(url, publicUrl)) {
      throw invalid(`${field} names an asset that does not exist in this workspace; upload the file with POST /assets and use the image_url it returns`);
    }
  }
  return ours;
}
