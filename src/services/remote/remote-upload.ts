import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError, invalid } from '../../domain/error-catalogue.js';
import { sniffAsset } from '../../engines/media/media-types.js';
import type { Log } from '../../lib/log.js';
import { contentTypeOf, isOutputName } from '../../outputs/output-store.js';
import type { OutputScratch } from '../../outputs/output-store.js';
import { formatBytes } from '../assets/asset-rules.js';
import { HeldJobs, mustStop } from './remote-jobs.js';
import type { RemoteDeps } from './remote-jobs.js';
import type { UploadAnswerView } from './remote-views.js';
import type { WorkerPrincipal } from './remote-tokens.js';

/** The first bytes kept to tell what a file is (media-types.ts reads at most this far). */
const SNIFF_BYTES = 64 * 1024;

export const tooLargeOutput = (maxBytes: number) =>
  new DomainError('payload_too_large', `the file is larger than the ${formatBytes(maxBytes)} (${maxBytes} bytes) an output may be (worker_output_max_bytes)`);

/** Counts the bytes passing (refusing past `maxBytes`) and keeps the first SNIFF_BYTES. */
function counted(maxBytes: number, seen: { bytes: number; head: Buffer[]; headBytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen.bytes += chunk.length;
      if (seen.bytes > maxBytes) return done(tooLargeOutput(maxBytes));
      if (seen.headBytes < SNIFF_BYTES) {
        seen.head.push(chunk.subarray(0, SNIFF_BYTES - seen.headBytes));
        seen.headBytes += Math.min(chunk.length, SNIFF_BYTES - seen.headBytes);
      }
      done(null, chunk);
    },
  });
}

/**
 * The body through `counter` into a new file at `path`. Unlike `pipeline(body, ...)`, a refusal
 * does not destroy the request: its socket must stay up for the 413 (sent with Connection: close,
 * so the rest of the body is never read).
 */
async function receive(body: Readable, counter: Transform, path: string, signal: AbortSignal): Promise<void> {
  const written = pipeline(counter, createWriteStream(path, { flags: 'wx' }), { signal });
  const cut = (err?: Error) => counter.destroy(err ?? new Error('the upload ended before the whole body arrived'));
  const onClose = () => {
    if (!body.readableEnded) cut();
  };
  body.on('error', cut).on('close', onClose);
  body.pipe(counter);
  try {
    await written;
  } finally {
    body.unpipe(counter);
    body.off('error', cut).off('close', onClose);
  }
}

/** What an output's name says it is; the names our outputs may have are those of a known media type. */
function declaredType(name: string): string {
  if (!isOutputName(name)) throw invalid(`'${name.slice(0, 100)}' is not an output name: 1 to 100 letters, digits, '.', '_' or '-', not starting with '.'`);
  const type = contentTypeOf(name);
  if (type === 'application/octet-stream') {
    throw invalid(`'${name}' has no output extension: name it .png, .jpg, .jpeg, .webp, .heic, .mp4, .mov, .webm, .glb, .wav or .mp3`);
  }
  return type;
}

/**
 * `PUT /worker/v1/jobs/{id}/outputs/{name}`: one output file of a job the worker holds, streamed
 * into the output store (a scratch file, then `put`), never held whole in memory. The size limit
 * cuts it the moment it is passed; what its bytes are must be what its name says, a type our
 * outputs are served as. Uploading a name again replaces the file.
 */
export class RemoteUploads {
  readonly #deps: RemoteDeps;
  readonly #held: HeldJobs;
  readonly #maxBytes: number;

  constructor(deps: RemoteDeps, maxBytes: number) {
    this.#deps = deps;
    this.#held = new HeldJobs(deps);
    this.#maxBytes = maxBytes;
  }

  get maxBytes(): number {
    return this.#maxBytes;
  }

  async upload(worker: WorkerPrincipal, jobId: string, name: string, leaseId: string | undefined, body: Readable, signal: AbortSignal, log: Log = this.#deps.log): Promise<UploadAnswerView> {
    if (!leaseId) throw invalid('query parameter lease_id is required: the lease of the claim this worker holds');
    const type = declaredType(name);
    const job = await this.#held.held(worker, jobId, leaseId, log);
    // An upload is the worker at work: it renews the lease as it starts and once it is stored.
    const beat = await this.#deps.runs.heartbeat(job);
    if (beat.kind === 'lost') throw mustStop(beat.why);
    const { outputs } = this.#deps;
    let scratch: OutputScratch;
    try {
      scratch = await outputs.scratch(job.outputKey, { keep: true });
    } catch (err) {
      // The key was removed under the job (a DELETE): the worker is told so, not a disk error.
      const now = await this.#held.lost(job.id);
      if ((now.details.fields?.reason ?? 'lease_lost') !== 'lease_lost') throw now;
      throw err;
    }
    try {
      const path = join(scratch.dir, 'upload');
      const seen = { bytes: 0, head: [] as Buffer[], headBytes: 0 };
      await receive(body, counted(this.#maxBytes, seen), path, signal);
      const kind = sniffAsset(Buffer.concat(seen.head));
      if (!kind.ok) throw new DomainError('unsupported_media_type', `${name}: the bytes are ${kind.what}, not an output this server serves (PNG, JPEG, WebP, HEIC, MP4, MOV, WebM, GLB, WAV or MP3)`);
      const sniffed = contentTypeOf(`file.${kind.type}`);
      if (sniffed !== type) throw new DomainError('unsupported_media_type', `${name}: the name says ${type} but the bytes are ${sniffed}; name the file by what it is`);
      // The lease again: a worker that lost the job while uploading stores nothing.
      await this.#held.held(worker, jobId, leaseId, log);
      try {
        await outputs.put(job.outputKey, name, path);
      } catch (err) {
        const now = await this.#held.lost(job.id);
        if ((now.details.fields?.reason ?? 'lease_lost') !== 'lease_lost') throw now;
        throw err;
      }
      await this.#deps.runs.heartbeat(job);
      return { name, size: seen.bytes, content_type: type };
    } finally {
      await scratch.dispose().catch(() => undefined);
    }
  }
}
