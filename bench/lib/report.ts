import { cpus, totalmem } from 'node:os';
import type { BackendName } from './database.js';
import type { BackendResult } from './results.js';

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memory_gb: number;
  readonly node: string;
  readonly platform: string;
}

export function machineInfo(): Machine {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

const num = (v: number | null, unit = ''): string => (v === null ? '—' : `${v}${unit}`);

/** The results as a Markdown table, one column per backend (pastes into docs/benchmarks.md). */
export function resultTable(results: Record<BackendName, BackendResult>): string {
  const names = Object.keys(results) as BackendName[];
  const rows: [string, (r: BackendResult) => string][] = [];
  const route = (label: string, key: keyof BackendResult['http'], base: string) => {
    rows.push([`${label}: rps (ratio to bare ${base})`, (r) => `${num(r.http[key].rps)} (${num(r.http[key].ratio)})`]);
    rows.push([`${label}: p50 / p99`, (r) => `${num(r.http[key].p50_ms)} / ${num(r.http[key].p99_ms)} ms`]);
  };
  route('`GET /jobs/{id}`', 'get_job', 'GET');
  route('`GET /jobs?limit=100`', 'list_jobs', 'GET');
  route('`POST` create (model-a-2 medium-turbo)', 'create_job', 'POST');
  route('`POST` create, over 16 workspaces', 'create_job_16ws', 'POST');
  const q = (label: string, key: 'dispatch_ms' | 'dispatch_split_ms' | 'webhook_ms') =>
    rows.push([`${label}, p50 / p99`, (r) => `${num(r[key].p50)} / ${num(r[key].p99)} ms`]);
  q('dispatch, embedded', 'dispatch_ms');
  q('dispatch, api and worker processes', 'dispatch_split_ms');
  q('webhook', 'webhook_ms');
  rows.push(['store scale, large / 10k: get, list, create', (r) => `${num(r.store_scale.get_ratio)}, ${num(r.store_scale.list_ratio)}, ${num(r.store_scale.create_ratio)}`]);
  rows.push(['pipeline, jobs/s', (r) => num(r.pipeline.jobs_per_s)]);
  rows.push(['pipeline, creates only, jobs/s', (r) => num(r.pipeline.create_only_jobs_per_s)]);
  const lines = [`| measure | ${names.join(' | ')} |`, `| --- | ${names.map(() => '---').join(' | ')} |`];
  for (const [label, cell] of rows) lines.push(`| ${label} | ${names.map((n) => cell(results[n])).join(' | ')} |`);
  return lines.join('\n');
}
