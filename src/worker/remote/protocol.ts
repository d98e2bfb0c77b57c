/**
 * The shapes of the worker protocol (`/worker/v1/`, docs/workers.md) as a remote worker sends and
 * reads them. The server's routes are the other side of the same contract.
 */
import type { WorkerFailCode } from '../../services/remote/remote-constants.js';

/** `POST /worker/v1/claim`. */
export interface ClaimRequest {
  /** Patterns (a subset of the token's) the worker takes jobs of. */
  readonly models?: readonly string[];
  readonly pool?: string;
  /** 1..32, default 1. */
  readonly max?: number;
  /** How long the server may hold the request open for a job, 0..30000 ms. */
  readonly wait_ms?: number;
  /** This instance's name (presence and logs), at most 100 characters. */
  readonly worker_id?: string;
}

/** One job a claim handed over. */
export interface ClaimedJob {
  readonly id: string;
  readonly model: string;
  /** The validated request body, defaults applied. */
  readonly request: Readonly<Record<string, unknown>>;
  /** 1-based. */
  readonly attempt: number;
  readonly lease_id: string;
  /** ISO time the lease ends without a heartbeat. */
  readonly lease_expires_at: string;
  /** ISO time the job times out (its first claim plus the model's timeout). */
  readonly deadline: string;
  /** Field path (`image_url`, `urls[0]`) -> a signed URL the worker GETs without a token. */
  readonly inputs: Readonly<Record<string, string>>;
  /** Style id -> the artifact its training run stored. */
  readonly styles: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Absolute URL prefix; an output named N is PUT to `upload_url + N`. */
  readonly upload_url: string;
}

export interface ClaimResponse {
  readonly jobs: readonly ClaimedJob[];
}

export type ProgressStatus = 'processing' | 'sampling' | 'intermediate-complete';

/** `POST /worker/v1/jobs/{id}/progress`: a status move, or (without status) a heartbeat. */
export interface ProgressRequest {
  readonly lease_id: string;
  readonly status?: ProgressStatus;
  readonly fraction?: number;
  /** The uploaded preview's name; only with `intermediate-complete`. */
  readonly preview?: string;
}

export interface ProgressResponse {
  readonly lease_expires_at: string;
  readonly status: string;
}

/** `PUT /worker/v1/jobs/{id}/outputs/{name}` answers this (201). */
export interface UploadResponse {
  readonly name: string;
  readonly size: number;
  readonly content_type: string;
}

export interface CompletedOutput {
  readonly name: string;
  readonly role?: 'model' | 'preview';
  readonly key?: string;
  readonly duration_us?: number;
}

/** `POST /worker/v1/jobs/{id}/complete`. */
export interface CompleteRequest {
  readonly lease_id: string;
  /** The main output first; each one uploaded before. */
  readonly outputs: readonly CompletedOutput[];
  /** A training job's style artifact (JSON object, at most 64 KiB). */
  readonly style?: Readonly<Record<string, unknown>>;
}

/** `POST /worker/v1/jobs/{id}/fail`. */
export interface FailRequest {
  readonly lease_id: string;
  readonly code: WorkerFailCode;
  /** Shown to the job's client; at most 500 characters. */
  readonly message: string;
  /** Hand the job back to the queue (another attempt) instead of failing it. */
  readonly retryable?: boolean;
}

export interface FailResponse {
  readonly status: 'failed' | 'queued';
}

/** The JSON body of a refusal. */
export interface ErrorBody {
  readonly error?: string;
  /** With 409 on a job route. */
  readonly reason?: string;
  /** With a signed input's refusal: `input_fetch_failed`, `input_invalid`, ... */
  readonly code?: string;
}
