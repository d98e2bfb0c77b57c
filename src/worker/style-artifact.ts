import { open } from 'node:fs/promises';
import type { StyleArtifact } from '../engines/engine.js';
import { EngineError } from '../engines/engine.js';

/** The largest style artifact a run may report: it is stored in the database with the style. */
export const MAX_STYLE_ARTIFACT_BYTES = 64 * 1024;

const refused = (why: string) => new EngineError('engine_failed', 'the training run produced no usable style', { detail: why });

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
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw refused('the style file is not a JSON object');
  return parsed as StyleArtifact;
}
