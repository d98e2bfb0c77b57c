import type { Quantiles } from './stats.js';

export interface RouteResult {
  readonly rps: number | null;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly ratio: number | null;
}

/** One backend's figures, the shape of `bench/results/latest.json` (issue 13); null: not measured. */
export interface BackendResult {
  http: { get_job: RouteResult; list_jobs: RouteResult; create_job: RouteResult; create_job_16ws: RouteResult };
  dispatch_ms: Quantiles;
  dispatch_split_ms: Quantiles;
  webhook_ms: Quantiles;
  store_scale: { get_ratio: number | null; list_ratio: number | null; create_ratio: number | null };
  pipeline: { jobs_per_s: number | null; create_only_jobs_per_s: number | null };
}

const noRoute = (): RouteResult => ({ rps: null, p50_ms: null, p99_ms: null, ratio: null });
const noQuantiles = (): Quantiles => ({ p50: null, p99: null });

export function emptyResult(): BackendResult {
  return {
    http: { get_job: noRoute(), list_jobs: noRoute(), create_job: noRoute(), create_job_16ws: noRoute() },
    dispatch_ms: noQuantiles(),
    dispatch_split_ms: noQuantiles(),
    webhook_ms: noQuantiles(),
    store_scale: { get_ratio: null, list_ratio: null, create_ratio: null },
    pipeline: { jobs_per_s: null, create_only_jobs_per_s: null },
  };
}
