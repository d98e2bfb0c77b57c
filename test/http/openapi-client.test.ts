import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';
import { checkedInject } from '../helpers/checked-inject.js';

/**
 * What a client generator makes of GET /openapi.json: openapi-typescript turns the document into
 * types, and small programs are type-checked against them. The wrong programs must fail, or the
 * right ones would prove nothing.
 */

const PREAMBLE = `
import type { components, paths, webhooks } from './api';
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type CreateA2 = paths['/generate/image/vendor-a/model-a-2/medium']['post'];
type Gone = Json<paths['/generate/image/vendor-g/model-g-3']['post']['responses'][410]>;
type Created = Json<CreateA2['responses'][200]>;
`;

const RIGHT = `${PREAMBLE}
export const body: Json<CreateA2['requestBody']> = { prompt: 'a fox', aspect_ratio: '16:9', resolution: '1K', creativity: 'raw' };
declare const created: Created;
export const status: components['schemas']['Job']['status'] = created.status;
export const id: string = created.job_id;
declare const job: components['schemas']['Job'];
export const done: boolean = job.status === 'completed' && job.completed_at !== undefined;
export const finishedAt: string | undefined = job.completed_at;
export const outputs: unknown = job.result?.urls;
declare const page: Json<paths['/jobs']['get']['responses'][200]>;
export const next: string | null = page.next_cursor;
export const first: components['schemas']['Job'] | undefined = page.items[0];
declare const gone: Gone;
export const error: 'model_unavailable' = gone.error;
export const reason: 'deprecated' = gone.reason;
export const sunset: string = gone.sunset_date;
export const replacement: string | undefined = gone.replacement;
export const migration: string | undefined = gone.migration_url;
declare const delivered: Json<webhooks['jobFinished']['post']['requestBody']>;
export const payload: components['schemas']['Job'] = delivered;
export const query: NonNullable<paths['/jobs']['get']['parameters']['query']> = { limit: 10, status: 'failed' };
`;

/** Each must fail to type-check, each for one reason. */
const WRONG: Record<string, string> = {
  'an aspect ratio the model does not offer': `${PREAMBLE}
export const body: Json<CreateA2['requestBody']> = { prompt: 'a fox', aspect_ratio: '5:7', resolution: '1K' };`,
  'a missing required field': `${PREAMBLE}
export const body: Json<CreateA2['requestBody']> = { prompt: 'a fox', aspect_ratio: '16:9' };`,
  'an unknown field': `${PREAMBLE}
export const body: Json<CreateA2['requestBody']> = { prompt: 'a fox', aspect_ratio: '16:9', resolution: '1K', presetStyles: [] };`,
  'a status that does not exist': `${PREAMBLE}
declare const created: Created;
export const done: boolean = created.status === 'done';`,
  'a 410 field that does not exist': `${PREAMBLE}
declare const gone: Gone;
export const when: string = gone.sunset;`,
  'a result on a just-created job': `${PREAMBLE}
declare const created: Created;
export const urls: unknown = created.result.urls;`,
  'a null completed_at on a job as GET shows it': `${PREAMBLE}
export const job: components['schemas']['Job'] = { job_id: 'j', type: 't', status: 'queued', created_at: 'c', completed_at: null };`,
  'a null result on a job as GET shows it': `${PREAMBLE}
export const job: components['schemas']['Job'] = { job_id: 'j', type: 't', status: 'failed', created_at: 'c', completed_at: 'd', result: null };`,
};

/**
 * What this server answered, as literals of the generated types: a strict client (exact optional
 * properties) takes the creation response, a pending and a completed job from GET, and a list page.
 */
const answered = (responses: Record<string, unknown>) => `${PREAMBLE}
export const created: Created = ${JSON.stringify(responses.created)};
export const pending: components['schemas']['Job'] = ${JSON.stringify(responses.pending)};
export const completed: components['schemas']['Job'] = ${JSON.stringify(responses.completed)};
export const page: Json<paths['/jobs']['get']['responses'][200]> = ${JSON.stringify(responses.page)};
`;

describe('a TypeScript client generated from the OpenAPI document', () => {
  let dir: string;
  let responses: Record<string, unknown>;
  beforeAll(async () => {
    const t = await createTestApp();
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    responses = await answers(t);
    await t.close();
    dir = mkdtempSync(join(tmpdir(), 'mediagen-client-'));
    // Request bodies are component schemas, where openapi-typescript by default reads a property
    // with a default as always present: true of a response, not of a request. This API's
    // responses have no defaults, so clients generate with defaultNonNullable off.
    writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(doc, { defaultNonNullable: false })));
    const files = { right: RIGHT, answered: answered(responses), ...Object.fromEntries(Object.entries(WRONG).map(([what, source]) => [fileOf(what), source])) };
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, `${name}.ts`), source);
    // One program for all: loading TypeScript's lib files once is most of the cost.
    program = ts.createProgram(
      Object.keys(files).map((name) => join(dir, `${name}.ts`)),
      {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler,
        exactOptionalPropertyTypes: true,
        types: [],
      },
    );
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  let program: ts.Program;
  const fileOf = (what: string) => `wrong-${what.replace(/\W+/g, '-')}`;

  /** The type errors of one program file, checked against the generated types. */
  function typeErrors(name: string): string[] {
    const file = program.getSourceFile(join(dir, `${name}.ts`))!;
    return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) =>
      ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    );
  }

  it('type-checks a program that creates a job, reads its status and the 410 body', () => {
    expect(typeErrors('right')).toEqual([]);
    expect(program.getGlobalDiagnostics()).toEqual([]);
  });

  it('type-checks what the server answers: the created job with its nulls, a pending and a completed job, a page', () => {
    expect((responses.pending as object)).not.toHaveProperty('completed_at');
    expect((responses.completed as object)).toHaveProperty('result');
    expect(typeErrors('answered')).toEqual([]);
  });

  it.each(Object.keys(WRONG))('refuses a program with %s', (what) => {
    expect(typeErrors(fileOf(what)).length, what).toBeGreaterThan(0);
  });
});

/** A job created, read while queued, then completed by hand (no engine) and read again. */
async function answers(t: TestApp): Promise<Record<string, unknown>> {
  const auth = { authorization: `Bearer ${t.token}` };
  const read = async (url: string) => (await checkedInject(t.app, { method: 'GET', url, headers: auth })).json() as Record<string, unknown>;
  const post = () =>
    checkedInject(t.app, { method: 'POST', url: '/generate/image/vendor-b/model-b-1', headers: { ...auth, 'content-type': 'application/json' }, payload: { prompt: 'a fox' } });
  const created = (await post()).json() as { job_id: string };
  const pending = await read(`/jobs/${created.job_id}`);
  await post();
  const job = (await t.services.runs.claim())!;
  await t.services.runs.advance(job, 'scheduled', 'processing');
  await t.services.runs.advance(job, 'processing', 'sampling');
  await t.services.runs.complete(job, 'sampling', { urls: [`/outputs/${job.outputKey}/output.png`] });
  return { created, pending, completed: await read(`/jobs/${created.job_id}`), page: await read('/jobs') };
}
