import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cleanup, run, startServer, tempDir } from './binary.js';
import type { RunResult } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
const SETS = ['--set', 'aspect_ratio=1:1', '--set', 'resolution=1K'];

/**
 * The client commands a newcomer meets first (issue 42), through the server's `mediagen` binary,
 * which runs them from the @mediagen/client package: a local file for a URL field, a model's
 * fields and price, and a mistyped model answered with the model meant.
 */
describe('the client commands: --set key=@FILE, models show, did you mean', { timeout: 120_000 }, () => {
  let url: string;
  let token: string;
  const cli = (args: string[], env: Record<string, string> = {}): Promise<RunResult> => run(args, { env: { MEDIAGEN_URL: url, MEDIAGEN_TOKEN: token, ...env } });

  beforeAll(async () => {
    const server = await startServer(['--port', '0', '--data-dir', tempDir(), '--engine-latency-ms', '100']);
    url = server.url;
    const [, t] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
    token = t!;
  });
  afterAll(cleanup);

  it('generate --set image_url=@FILE uploads the file as an asset and sends its URL, which serves the same bytes', async () => {
    const dir = tempDir();
    const photo = join(dir, 'photo.png');
    writeFileSync(photo, await sharp({ create: { width: 96, height: 64, channels: 3, background: { r: 200, g: 90, b: 30 } } }).png().toBuffer());
    const r = await cli(['generate', MODEL, '--prompt', 'the same, at night', ...SETS, '--set', `image_url=@${photo}`, '--wait', '--json', '-q']);
    expect(r.code, r.stderr).toBe(0);
    const job = JSON.parse(r.stdout) as { job_id: string; status: string };
    expect(job.status).toBe('completed');

    const assets = (await api(url, '/assets', token)).body as { items: { id: string; image_url: string }[] };
    expect(assets.items).toHaveLength(1);
    const details = (await api(url, `/jobs/${job.job_id}/details`, token)).body as { request: Record<string, unknown> };
    expect(details.request.image_url).toBe(assets.items[0]!.image_url);
    const served = Buffer.from(await (await fetch(assets.items[0]!.image_url)).arrayBuffer());
    expect(served.equals(readFileSync(photo))).toBe(true);
  });

  it("--set key=@FILE of a file that is not there is a usage error (exit 2) and uploads nothing; '@@' sends a text starting with '@'", async () => {
    const before = ((await api(url, '/assets', token)).body as { items: unknown[] }).items.length;
    const missing = await cli(['generate', MODEL, '--prompt', 'x', ...SETS, '--set', `image_url=@${join(tempDir(), 'nope.png')}`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^mediagen: cannot read .*nope\.png: ENOENT\n$/);

    const literal = await cli(['generate', MODEL, '--set', 'prompt=@@home', ...SETS, '--json']);
    expect(literal.code, literal.stderr).toBe(0);
    const id = (JSON.parse(literal.stdout) as { job_id: string }).job_id;
    expect(((await api(url, `/jobs/${id}/details`, token)).body as { request: { prompt: string } }).request.prompt).toBe('@home');
    expect(((await api(url, '/assets', token)).body as { items: unknown[] }).items).toHaveLength(before);
  });

  it('models show MODEL prints its fields with type, allowed values and default, and its price; --json is GET /models/{id}', async () => {
    const r = await cli(['models', 'show', MODEL], { MEDIAGEN_TOKEN: '' });
    expect(r.code, r.stderr).toBe(0);
    const model = (await api(url, `/models/${encodeURIComponent(MODEL)}`, token)).body as {
      price: { rates_micro_usd: Record<string, number> };
      request_schema: { properties: Record<string, { enum?: string[] }>; required: string[] };
    };
    expect(r.stdout.split('\n')[0]).toBe(`${MODEL}  (image, available)`);
    expect(r.stdout).toContain(`  POST /generate/${MODEL}\n`);
    for (const [rate, micros] of Object.entries(model.price.rates_micro_usd)) expect(r.stdout).toMatch(new RegExp(`\\n {2}${rate} +${(micros / 1e6).toFixed(6)} USD\\n`));
    expect(r.stdout).toMatch(/\n {2}prompt\* +string/);
    const ratios = model.request_schema.properties.aspect_ratio!.enum!;
    const required = model.request_schema.required.includes('aspect_ratio') ? '\\*' : '';
    expect(r.stdout).toMatch(new RegExp(`\\n {2}aspect_ratio${required} +one of ${ratios.join('\\|')}`));
    for (const field of Object.keys(model.request_schema.properties)) expect(r.stdout).toMatch(new RegExp(`\\n {2}${field}\\*? `));

    const asJson = await cli(['models', 'show', MODEL, '--json']);
    expect(JSON.parse(asJson.stdout)).toEqual(model);
  });

  it('a mistyped model is refused (exit 5) with the command for the model meant, by generate and by models show', async () => {
    const typo = 'image/vendor-a/model-a-2/mediun';
    const r = await cli(['generate', typo, '--prompt', 'x', ...SETS]);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(new RegExp(`^mediagen: unknown model '${typo}'; did you mean 'mediagen generate ${MODEL} \\.\\.\\.'\\? \\(HTTP 404, request \\S+\\)\\n$`));

    const show = await cli(['models', 'show', 'image/vendor-a/modl-a-2/medium']);
    expect(show.code).toBe(5);
    expect(show.stderr).toContain(`did you mean 'mediagen models show ${MODEL}'?`);

    const far = await cli(['generate', 'video/nothing/like/it', '--prompt', 'x']);
    expect(far.code).toBe(5);
    expect(far.stderr).toMatch(/^mediagen: unknown model 'video\/nothing\/like\/it'; 'mediagen models' lists them \(HTTP 404/);
  });
});
