import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Asset, Mediagen } from '../index.js';
import { UsageError } from './exit.js';

/**
 * Uploads a local file as an asset (POST /assets): `mediagen assets upload FILE`, and a
 * `--set key=@FILE` of `generate`, which then sends the asset's URL. Read as a stream
 * (openAsBlob), so a large video is not held in memory.
 */
export async function uploadFile(client: Mediagen, file: string, description?: string): Promise<Asset> {
  let blob: Blob;
  try {
    // openAsBlob words a missing file as ERR_INVALID_ARG_VALUE; stat says ENOENT (or EACCES...).
    if (!(await stat(file)).isFile()) throw new UsageError(`cannot read ${file}: not a file`);
    blob = await openAsBlob(file);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return client.assets.upload(blob, { filename: basename(file), ...(description !== undefined ? { description } : {}) });
}
