import { EngineError, JOB_ERROR_CODES } from '../../engines/engine.js';
import type { JobErrorCode } from '../../engines/engine.js';
import { DataUriError, decodeDataUri, formatBytes } from '../../lib/data-uri.js';
import { isPlainObject } from '../../lib/plain-object.js';
import type { ClaimedJobView } from '../../services/remote/remote-views.js';
import { ServerUnreachable, TooLarge } from './protocol-client.js';
import type { WorkerClient } from './protocol-client.js';

export interface RemoteInputLimits {
  /** The largest input read, decoded or downloaded (input_max_bytes). */
  readonly maxBytes: number;
  /** Time one download may take. */
  readonly timeoutMs: number;
}

/** The codes a refused signed input may carry through to the job. */
const INPUT_CODES = new Set<JobErrorCode>(['input_fetch_failed', 'input_invalid', 'input_too_large']);

const named = (field: string, message: string) => (message.startsWith(field) ? message : `${field}: ${message}`);

/**
 * `EngineContext.loadInput` for a claimed job: a `data:` URI is decoded here; an http(s) URL is
 * read through the signed URL the claim gave for its field (the server fetches it with its own
 * guard and limits), within the same size cap. Failures are EngineErrors naming the field.
 */
export function remoteInputLoader(client: WorkerClient, job: Pick<ClaimedJobView, 'request' | 'inputs'>, limits: RemoteInputLimits) {
  return async (url: string, field: string, signal: AbortSignal): Promise<Buffer> => {
    if (/^data:/i.test(url)) {
      try {
        return decodeDataUri(url, { maxBytes: limits.maxBytes }).data;
      } catch (err) {
        if (err instanceof DataUriError) throw new EngineError('input_invalid', `${field}: ${err.message}`);
        throw err;
      }
    }
    const signed = signedUrlOf(job, url, field);
    if (!signed) throw new EngineError('input_fetch_failed', `${field}: the server gave no address to read this input from`);
    let answer;
    try {
      answer = await client.download(signed, limits.maxBytes, limits.timeoutMs, signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof TooLarge) throw new EngineError('input_fetch_failed', `${field}: the input is larger than ${formatBytes(limits.maxBytes)}`);
      const why = err instanceof ServerUnreachable ? 'the server could not be reached' : (err as Error).name === 'TimeoutError' ? 'the download timed out' : 'the download failed';
      throw new EngineError('input_fetch_failed', `${field}: ${why}`, { cause: err, detail: (err as Error).message });
    }
    if (answer.ok) return answer.data;
    const code = answer.body.code as JobErrorCode | undefined;
    if (code && code in JOB_ERROR_CODES && INPUT_CODES.has(code) && answer.body.error) throw new EngineError(code, named(field, answer.body.error));
    if (answer.status === 404) throw new EngineError('input_fetch_failed', `${field}: the server no longer serves this input`);
    // A signature the server does not accept is a fault of this worker's, not of the input.
    if (answer.status === 403) throw new EngineError('engine_failed', `${field}: the server refused the signed input URL`);
    throw new EngineError('input_fetch_failed', `${field}: the server answered HTTP ${answer.status}`);
  };
}

/**
 * The signed URL for an input: by the field the engine names, else by the field of the request
 * whose value is this URL (an engine may name a field its own way).
 */
function signedUrlOf(job: Pick<ClaimedJobView, 'request' | 'inputs'>, url: string, field: string): string | undefined {
  const inputs = isPlainObject(job.inputs) ? job.inputs : {};
  const direct = inputs[field];
  if (typeof direct === 'string') return direct;
  for (const [path, value] of fieldsOf(job.request, '')) {
    if (value === url && typeof inputs[path] === 'string') return inputs[path];
  }
  return undefined;
}

/** Every string of a JSON value with its path: `image_url`, `urls[0]`, `styles[1].url`. */
function* fieldsOf(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [path, value];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* fieldsOf(v, `${path}[${i}]`);
  else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) yield* fieldsOf(v, path ? `${path}.${k}` : k);
}
