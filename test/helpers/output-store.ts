import type { Readable } from 'node:stream';
import type { OutputEntry, OutputStore } from '../../src/outputs/output-store.js';

/** Every listed entry, sorted by name. */
export async function listAll(files: OutputStore): Promise<OutputEntry[]> {
  const out: OutputEntry[] = [];
  for await (const e of files.list()) out.push(e);
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** A stream's bytes as text. */
export async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

