import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError, forbidden, notFound } from '../../domain/error-catalogue.js';
import { RUNNING_STATUSES } from '../../domain/states.js';
import { EngineError } from '../../engines/engine.js';
import { sniffAsset } from '../../engines/media/media-types.js';
import type { Catalog } from '../../models/catalog.js';
import { httpUrlInputsOf } from '../../models/private-urls.js';
import type { UrlInput } from '../../models/private-urls.js';
import { Semaphore } from '../../lib/semaphore.js';
import { resolveUrl } from '../../lib/urls.js';
import { contentTypeOf } from '../../outputs/output-store.js';
import type { JobRecord } from '../../store/store.js';
import type { ClaimedJob, JobRuns } from '../jobs/job-runs.js';
import { REMOTE_PATH_PREFIX } from './remote-constants.js';
import { assertMayWork } from './remote-jobs.js';
import type { WorkerPrincipal, WorkerTokenService } from './remote-tokens.js';

/**
 * A remote worker's inputs (docs/workers.md): every http(s) URL field of a claimed job's request
 * becomes a signed URL on this server, which loads the input with the same guard and limits as an
 * in-process run (assets from the store, anything else through the guarded fetch) and answers its
 * bytes. The worker never fetches a client's URL itself, so it needs no address guard of its own
 * and no way out to the internet.
 *
 * Signature: hex HMAC-SHA256 keyed with the worker token's hash over `${job}\n${lease}\n${n}\n${exp}`:
 * bound to the claim. Valid without an Authorization header until `exp` (unix seconds, at most 10
 * minutes on), and only while that claim's lease is the job's (the job runs under it) and the token
 * is not revoked: another token, or a worker that lost the job, reads nothing with it.
 */
export const INPUT_URL_TTL_S = 600;

/**
 * Inputs one process loads for remote workers at once: each holds up to `input_max_bytes` in
 * memory while it is served. Past it, a GET is refused with 503 and Retry-After (the worker retries).
 */
export const INPUT_SERVES_MAX = 16;
const BUSY_RETRY_AFTER_S = 2;

/** Loads one input the way an in-process run does (worker/input-loader.ts, wired by the runtime). */
export type InputLoad = (url: string, field: string, signal: AbortSignal) => Promise<Buffer>;

export function inputSignature(tokenHash: string, jobId: string, leaseId: string, n: number, exp: number): string {
  return createHmac('sha256', tokenHash).update(`${jobId}\n${leaseId}\n${n}\n${exp}`).digest('hex');
}

/** The http(s) URL fields of a job's request, in the order their numbers (`n`) count. */
export function inputsOf(catalog: Pick<Catalog, 'get'>, job: Pick<JobRecord, 'type' | 'request'>): UrlInput[] {
  return httpUrlInputsOf(catalog.get(job.type)?.request, job.request);
}

/** The signed URLs of a claimed job's inputs, by field, for the worker `worker` under the claim's lease. */
export function signedInputs(catalog: Pick<Catalog, 'get'>, job: ClaimedJob, worker: WorkerPrincipal, publicUrl: string, nowMs: number): Record<string, string> {
  const exp = Math.floor(nowMs / 1000) + INPUT_URL_TTL_S;
  const out: Record<string, string> = {};
  inputsOf(catalog, job).forEach(({ field }, n) => {
    const sig = inputSignature(worker.tokenHash, job.id, job.leaseId, n, exp);
    const query = new URLSearchParams({ exp: String(exp), lease: job.leaseId, tok: worker.tokenId, sig });
    // Relative to the public URL, so that its own path prefix (https://host/api/) is kept.
    out[field] = resolveUrl(`${REMOTE_PATH_PREFIX.slice(1)}/jobs/${job.id}/inputs/${n}?${query.toString()}`, publicUrl);
  });
  return out;
}

/** A signed input URL's query, as received. */
export interface InputQuery {
  readonly exp?: string | undefined;
  readonly lease?: string | undefined;
  readonly tok?: string | undefined;
  readonly sig?: string | undefined;
}

export interface InputBytes {
  readonly data: Buffer;
  readonly contentType: string;
}

const refused = () => forbidden('the input URL is not validly signed');
const gone = () => notFound('no such input: the URL has expired, or its claim no longer holds the job, or its token was revoked');

/** Serves signed input URLs. */
export class RemoteInputs {
  readonly #runs: Pick<JobRuns, 'find'>;
  readonly #catalog: Pick<Catalog, 'get'>;
  readonly #remote: ReadonlyMap<string, string>;
  readonly #tokens: Pick<WorkerTokenService, 'byId'>;
  readonly #load: InputLoad;
  readonly #nowMs: () => number;
  readonly #gate: Semaphore;

  constructor(
    runs: Pick<JobRuns, 'find'>,
    catalog: Pick<Catalog, 'get'>,
    remote: ReadonlyMap<string, string>,
    tokens: Pick<WorkerTokenService, 'byId'>,
    load: InputLoad,
    nowMs: () => number,
    concurrency = INPUT_SERVES_MAX,
  ) {
    this.#gate = new Semaphore(concurrency, 0);
    this.#runs = runs;
    this.#catalog = catalog;
    this.#remote = remote;
    this.#tokens = tokens;
    this.#load = load;
    this.#nowMs = nowMs;
  }

  /**
   * The input `n` of job `jobId`, if the query signs it: 403 for a signature that does not check
   * out, 404 once it has expired or its job or token is gone, 502 `{code}` when loading fails.
   */
  async open(jobId: string, n: string, query: InputQuery, signal: AbortSignal): Promise<InputBytes> {
    const index = /^(0|[1-9][0-9]{0,3})$/.test(n) ? Number(n) : NaN;
    const exp = /^[0-9]{1,12}$/.test(query.exp ?? '') ? Number(query.exp) : NaN;
    const lease = query.lease;
    if (Number.isNaN(index) || Number.isNaN(exp) || !lease || lease.length > 100 || !query.tok || !/^[0-9a-f]{64}$/.test(query.sig ?? '')) throw refused();
    const nowS = Math.floor(this.#nowMs() / 1000);
    if (exp > nowS + INPUT_URL_TTL_S) throw refused();
    if (exp < nowS) throw gone();
    const worker = await this.#tokens.byId(query.tok);
    // An unknown and a revoked token read alike: neither signs anything any more.
    if (!worker) throw gone();
    const expected = Buffer.from(inputSignature(worker.tokenHash, jobId, lease, index, exp), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(query.sig!, 'hex'))) throw refused();
    const job = await this.#runs.find(jobId);
    // Only while the claim that signed it holds the job: not after a requeue, nor for another claim.
    if (!job || job.leaseId !== lease || !RUNNING_STATUSES.includes(job.status)) throw gone();
    assertMayWork(this.#remote, worker, job.type);
    const input = inputsOf(this.#catalog, job)[index];
    if (!input) throw gone();
    const release = await this.#gate.acquire();
    if (!release) throw new DomainError('unavailable', 'the server is serving as many inputs as it may at once; retry shortly', { retryAfterSeconds: BUSY_RETRY_AFTER_S });
    let data: Buffer;
    try {
      data = await this.#load(input.url, input.field, signal);
    } catch (err) {
      if (err instanceof EngineError) throw new DomainError('input_unavailable', err.message, { fields: { code: err.code } });
      throw err;
    } finally {
      release();
    }
    const kind = sniffAsset(data.subarray(0, 64 * 1024));
    return { data, contentType: kind.ok ? contentTypeOf(`input.${kind.type}`) : 'application/octet-stream' };
  }
}
