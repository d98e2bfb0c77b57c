import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPng, readPngSize } from '../helpers/media.js';
import { BIN, RUN_TIMEOUT_MS, api, childEnv, cleanup, run, startServer, tempDir } from './binary.js';
import type { RunResult, Server } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const SETS = ['--set', 'aspect_ratio=16:9', '--set', 'resolution=1K'];
/** An image_url whose bytes are text: the job is created, then fails when it runs (input_invalid). */
const NOT_AN_IMAGE = 'image_url=data:image/png;base64,aGVsbG8=';

async function tokenOf(server: Server): Promise<string> {
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return token!;
}

type Job = { job_id: string; status: string; result?: { urls: string[] }; error?: { code: string } };

/**
 * `mediagen generate|jobs|assets|models|usage` (the compiled binary, stdout and stderr piped)
 * against a server that runs jobs and one (`--role api`) whose jobs stay queued.
 */
describe('the client command line against the real server', { timeout: 120_000 }, () => {
  let runs: { url: string; token: string };
  let queues: { url: string; token: string };
  const cli = (to: { url: string; token: string }, args: string[], cwd?: string): Promise<RunResult> =>
    run(args, { env: { MEDIAGEN_URL: to.url, MEDIAGEN_TOKEN: to.token }, ...(cwd ? { cwd } : {}) });

  beforeAll(async () => {
    const worker = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '200']);
    const apiOnly = await startServer(['--port', '0', '--data-dir', tempDir(), '--role', 'api']);
    runs = { url: worker.url, token: await tokenOf(worker) };
    queues = { url: apiOnly.url, token: await tokenOf(apiOnly) };
  });
  afterAll(cleanup);

  it('generate --wait --out writes the PNG, prints its path, and shows progress as plain lines when piped', async () => {
    const out = tempDir();
    const r = await cli(runs, ['generate', MODEL, '--prompt', 'a lighthouse at dusk', ...SETS, '--wait', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const files = readdirSync(out);
    expect(files).toHaveLength(1);
    expect(r.stdout).toBe(`${join(out, files[0]!)}\n`);
    const png = readFileSync(join(out, files[0]!));
    expect(isPng(png)).toBe(true);
    expect(readPngSize(png)).toEqual({ width: 1344, height: 756 });
    const lines = r.stderr.trimEnd().split('\n');
    expect(r.stderr).not.toContain('\r');
    expect(lines.at(-1)).toMatch(/^job [0-9a-f-]{36} completed after \d+\.\d s$/);
    expect(lines[0]).toMatch(/^job [0-9a-f-]{36} (queued|scheduled|processing|sampling) after \d+\.\d s$/);
    expect(files[0]!.startsWith(lines[0]!.split(' ')[1]!)).toBe(true);
  });

  it('--json prints the final job as GET shows it; without --wait, the new job', async () => {
    const r = await cli(runs, ['generate', MODEL, '--prompt', 'a fox', ...SETS, '--set', 'seed=5', '--wait', '--json', '-q']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const job = JSON.parse(r.stdout) as Job;
    expect(job).toMatchObject({ status: 'completed', type: MODEL });
    expect((await api(runs.url, `/jobs/${job.job_id}`, runs.token)).body).toEqual(job);

    const created = await cli(queues, ['generate', MODEL, '--prompt', 'a fox', ...SETS]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
  });

  it('takes the body from a file, with --prompt and --set on top', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'body.json'), JSON.stringify({ prompt: 'from the file', aspect_ratio: '1:1', resolution: '1K' }));
    const r = await cli(runs, ['generate', MODEL, '--body', join(dir, 'body.json'), '--set', 'aspect_ratio=4:3', '--wait', '--json', '-q']);
    expect(r.code, r.stderr).toBe(0);
    const job = JSON.parse(r.stdout) as Job;
    const [url] = job.result!.urls;
    expect(readPngSize(Buffer.from(await (await fetch(url!)).arrayBuffer()))).toEqual({ width: 1152, height: 864 });
  });

  it('exits 3 when the job fails, 5 when the server refuses, 6 when --timeout runs out, 2 on a usage mistake, 1 when it cannot save or reach', async () => {
    const failed = await cli(runs, ['generate', MODEL, '--prompt', 'x', ...SETS, '--set', NOT_AN_IMAGE, '--wait']);
    expect(failed.code, failed.stderr).toBe(3);
    expect(failed.stderr).toMatch(/^mediagen: job [0-9a-f-]{36} failed: input_invalid: image_url is a text file/m);

    const invalid = await cli(runs, ['generate', MODEL, '--prompt', 'x', '--wait']);
    expect(invalid.code).toBe(5);
    expect(invalid.stderr).toMatch(/^mediagen: missing required property 'aspect_ratio' \(HTTP 400, request [^)]+\)\n$/);
    const retired = await cli(runs, ['generate', 'image/vendor-g/model-g-3', '--prompt', 'x']);
    expect(retired.code).toBe(5);
    expect(retired.stderr).toMatch(/^mediagen: image\/vendor-g\/model-g-3 was retired on 2026-05-13; use image\/vendor-g\/model-g-5-lite instead \(HTTP 410/);
    const unknown = await cli(runs, ['jobs', 'get', '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69']);
    expect(unknown.code).toBe(5);

    const timeout = await cli(queues, ['generate', MODEL, '--prompt', 'x', ...SETS, '--timeout', '1']);
    expect(timeout.code, timeout.stderr).toBe(6);
    expect(timeout.stderr).toMatch(/mediagen: job [0-9a-f-]{36} is still queued; follow it with 'mediagen jobs wait [0-9a-f-]{36}'\n$/);

    for (const args of [['generate'], ['generate', MODEL, '--colour', 'red'], ['generate', MODEL, '--set', 'oops'], ['jobs', 'frobnicate'], ['generate', MODEL, '--timeout', 'soon']]) {
      const r = await cli(runs, args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/^mediagen: [^\n]+\n$/);
    }
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'x');
    const unsaved = await cli(runs, ['generate', MODEL, '--prompt', 'x', ...SETS, '--out', join(file, 'sub'), '-q']);
    expect(unsaved.code).toBe(1);
    expect(unsaved.stderr).toMatch(/^mediagen: job [0-9a-f-]{36} completed, but its outputs could not be saved into .+: ENOTDIR\n$/);

    const noUrl = await run(['jobs', 'list']);
    expect(noUrl).toMatchObject({ code: 2, stderr: "mediagen: give the mediagen server's URL with --url or MEDIAGEN_URL\n" });
    const unreachable = await run(['models', '--url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^mediagen: cannot reach the mediagen server at http:\/\/127\.0\.0\.1:9/);
  });

  it('jobs wait exits 4 for a job cancelled meanwhile, and for one deleted while it waits', async () => {
    const { body } = await api(queues.url, `/generate/${MODEL}`, queues.token, { method: 'POST', body: { prompt: 'x', aspect_ratio: '1:1', resolution: '1K' } });
    const id = body.job_id as string;
    // Deleted while waited for: the wait has seen the job (its first progress line) before the DELETE.
    const child = spawn(process.execPath, [BIN, 'jobs', 'wait', id], { env: childEnv({ MEDIAGEN_URL: queues.url, MEDIAGEN_TOKEN: queues.token }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const firstLine = new Promise<void>((resolve) =>
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('\n')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    await firstLine;
    expect(stderr).toBe(`job ${id} queued after ${stderr.match(/after (\d+\.\d) s/)![1]} s\n`);
    expect((await api(queues.url, `/jobs/${id}`, queues.token, { method: 'DELETE' })).status).toBe(200);
    expect(await exited).toBe(4);
    clearTimeout(killer);
    expect(stderr).toMatch(new RegExp(`mediagen: job ${id} was deleted\\n$`));

    const second = await api(queues.url, `/generate/${MODEL}`, queues.token, { method: 'POST', body: { prompt: 'y', aspect_ratio: '1:1', resolution: '1K' } });
    const cancel = await cli(queues, ['jobs', 'cancel', String(second.body.job_id)]);
    expect(cancel).toMatchObject({ code: 0, stdout: `${String(second.body.job_id)} cancelled\n` });
    const waited = await cli(queues, ['jobs', 'wait', String(second.body.job_id), '--json', '-q']);
    expect(waited.code).toBe(4);
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: 'cancelled' });
    const again = await cli(queues, ['jobs', 'cancel', String(second.body.job_id)]);
    expect(again.code).toBe(5);
  });

  it('jobs list, get and delete; assets upload; models; usage', async () => {
    const created = await cli(queues, ['generate', MODEL, '--prompt', 'a list entry', ...SETS]);
    const id = created.stdout.trim();
    const listed = await cli(queues, ['jobs', 'list', '--limit', '1']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${id} {2}queued +\\S+ {2}${MODEL}\\n$`));
    expect(listed.stderr).toMatch(/^more: mediagen jobs list --cursor \S+ \(or --all\)\n$/);
    // --tag on generate (repeatable) sends X-Mediagen-Tags; jobs list --tag lists that tag's jobs only.
    const tagged = await cli(queues, ['generate', MODEL, '--prompt', 'a tagged entry', ...SETS, '--tag', 'team-a', '--tag', 'campaign-7']);
    expect(tagged.code, tagged.stderr).toBe(0);
    const byTag = await cli(queues, ['jobs', 'list', '--tag', 'campaign-7', '--json']);
    expect((JSON.parse(byTag.stdout) as { items: (Job & { tags?: string[] })[] }).items.map((j) => [j.job_id, j.tags])).toEqual([
      [tagged.stdout.trim(), ['campaign-7', 'team-a']],
    ]);
    const badTag = await cli(queues, ['generate', MODEL, '--prompt', 'x', ...SETS, '--tag', 'Team-A']);
    expect(badTag.code).toBe(5);
    expect(badTag.stderr).toContain('X-Mediagen-Tags');
    const all = await cli(queues, ['jobs', 'list', '--all', '--json']);
    expect((JSON.parse(all.stdout) as Job[]).map((j) => j.job_id)).toContain(id);
    const got = await cli(queues, ['jobs', 'get', id]);
    expect(JSON.parse(got.stdout)).toMatchObject({ job_id: id, status: 'queued' });
    expect(await cli(queues, ['jobs', 'delete', id])).toMatchObject({ code: 0, stdout: `${id} deleted\n` });

    const dir = tempDir();
    const file = join(dir, 'card.png');
    writeFileSync(file, await sharp({ create: { width: 40, height: 30, channels: 3, background: '#30a050' } }).png().toBuffer());
    const uploaded = await cli(runs, ['assets', 'upload', file, '--description', 'a green card', '--json']);
    expect(uploaded.code, uploaded.stderr).toBe(0);
    expect(JSON.parse(uploaded.stdout)).toMatchObject({ mime_type: 'image/png', width: 40, height: 30, description: 'a green card' });

    const models = await run(['models', '--url', runs.url]);
    expect(models.code, models.stderr).toBe(0);
    expect(models.stdout).toMatch(new RegExp(`^${MODEL} +image {2}available$`, 'm'));
    expect(models.stdout).toMatch(/^image\/vendor-g\/model-g-3 +image {2}retired$/m);

    const usage = await cli(runs, ['usage']);
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toMatch(/^total \d+\.\d{6} USD for \d+ jobs?\n$/m);
    expect(JSON.parse((await cli(runs, ['usage', '--json'])).stdout)).toMatchObject({ items: expect.any(Array), total_usd: expect.stringMatching(/^\d+\.\d{6}$/) });
  });

  it('--help lists the commands and the exit statuses', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('mediagen generate MODEL');
    expect(r.stdout).toContain('6  --timeout ran out before the job ended');
    const g = await run(['generate', '--help']);
    expect(g).toMatchObject({ code: 0, stdout: expect.stringContaining('--set KEY=VALUE') });
  });
});
