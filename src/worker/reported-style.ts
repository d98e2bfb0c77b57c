import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { OutputFile, StyleArtifact } from '../engines/engine.js';
import { EngineError, MAX_STYLE_ARTIFACT_BYTES } from '../engines/engine.js';
import { isPlainObject } from '../lib/plain-object.js';

const refused = (why: string) => new EngineError('engine_failed', 'the training run produced no usable style', { detail: why });

/**
 * The style a run made, from the files it reported: exactly one `role: 'style'` file when its
 * model makes styles (`makesStyle`), none otherwise. Either way wrong fails the job as the
 * engine's fault (engine_failed), before any file is published or anything charged.
 */
export async function styleOf(reported: readonly OutputFile[], outDir: string, makesStyle: boolean): Promise<StyleArtifact | undefined> {
  const files = reported.filter((f) => f.role === 'style');
  if (!makesStyle) {
    if (files.length > 0) throw new EngineError('engine_failed', 'the run reported a style file for a model that trains none', { detail: 'a style file from a model without makesStyle' });
    return undefined;
  }
  if (files.length === 0) throw refused('no style file');
  if (files.length > 1) throw refused('more than one style file');
  return readStyleArtifact(join(outDir, files[0]!.name));
}

/**
 * A training run's style file (`role: 'style'`), read from its scratch directory: a JSON object of
 * at most MAX_STYLE_ARTIFACT_BYTES. Anything else fails the job as the engine's fault. A read that
 * fails for the disk's sake is thrown as it is, so the run treats it as an infrastructure fault.
 */
export async function readStyleArtifact(path: string): Promise<StyleArtifact> {
  const file = await open(path, 'r');
  let text: string;
  try {
    // One byte past the limit tells a file that is too long without reading all of it.
    const buf = Buffer.alloc(MAX_STYLE_ARTIFACT_BYTES + 1);
    const { bytesRead } = await file.read(buf, 0, buf.length, 0);
    if (bytesRead > MAX_STYLE_ARTIFACT_BYTES) throw refused(`the style file is larger than ${MAX_STYLE_ARTIFACT_BYTES} bytes`);
    text = buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await file.close();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw refused(`the style file is not JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(parsed)) throw refused('the style file is not a JSON object');
  return parsed;
}
