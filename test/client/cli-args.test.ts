import { describe, expect, it } from 'vitest';
import { clientSettings } from '../../packages/client/src/cli/settings.js';
import { buildBody, setField } from '../../packages/client/src/cli/output.js';
import { progressFor } from '../../packages/client/src/cli/progress.js';
import type { Job } from '../../packages/client/src/index.js';

const job = (status: Job['status']): Job => ({ job_id: '0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69', type: 'image/x', status, created_at: '2026-11-22T12:00:00.000000Z' });

describe('the client commands: settings, bodies, progress', () => {
  it('reads --url/--token, then MEDIAGEN_URL and MEDIAGEN_TOKEN, then MEDIAGEN_API_TOKEN', () => {
    const env = { MEDIAGEN_URL: 'http://env.example/api/', MEDIAGEN_TOKEN: 'tok-a', MEDIAGEN_API_TOKEN: 'tok-b' };
    expect(clientSettings({}, { tokenRequired: true }, env)).toEqual({ baseUrl: 'http://env.example/api', token: 'tok-a' });
    expect(clientSettings({}, { tokenRequired: true }, { ...env, MEDIAGEN_TOKEN: undefined })).toEqual({ baseUrl: 'http://env.example/api', token: 'tok-b' });
    expect(clientSettings({ url: 'https://flag.example', token: 'tok-f' }, { tokenRequired: true }, env)).toEqual({ baseUrl: 'https://flag.example', token: 'tok-f' });
    expect(clientSettings({}, { tokenRequired: false }, { MEDIAGEN_URL: 'http://x' })).toEqual({ baseUrl: 'http://x', token: undefined });
    expect(() => clientSettings({}, { tokenRequired: true }, { MEDIAGEN_URL: 'http://x' })).toThrow('give an API token with --token or MEDIAGEN_TOKEN');
    expect(() => clientSettings({}, { tokenRequired: false }, {})).toThrow("give the mediagen server's URL with --url or MEDIAGEN_URL");
    expect(() => clientSettings({ url: 'ftp://x' }, { tokenRequired: false }, {})).toThrow("--url must be an http(s) URL, got 'ftp:'");
    expect(() => clientSettings({ url: 'http://u:p@x' }, { tokenRequired: false }, {})).toThrow('must not carry credentials');
  });

  it('--set reads JSON when it parses, else text, and makes nested objects from dots', () => {
    const body: Record<string, unknown> = {};
    for (const a of ['seed=42', 'aspect_ratio=16:9', 'resolution=1K', 'raw=true', 'styles=[{"id":"s1","strength":0.5}]', 'a.b.c="7"', 'a.b.d=null', 'empty=']) setField(body, a);
    expect(body).toEqual({ seed: 42, aspect_ratio: '16:9', resolution: '1K', raw: true, styles: [{ id: 's1', strength: 0.5 }], a: { b: { c: '7', d: null } }, empty: '' });
    expect(() => setField(body, 'noequals')).toThrow("--set takes key=value, got 'noequals'");
    expect(() => setField(body, '__proto__.x=1')).toThrow('bad key');
    expect(() => setField(body, 'seed.x=1')).toThrow("'seed' is already set to a value that is not an object");
  });

  it('builds the body from --body, then --prompt, then --set', async () => {
    const body = await buildBody({ body: '-', prompt: 'a fox', set: ['seed=1'] }, async () => '{"prompt":"old","aspect_ratio":"1:1"}');
    expect(body).toEqual({ prompt: 'a fox', aspect_ratio: '1:1', seed: 1 });
    await expect(buildBody({ body: '-' }, async () => '[1]')).rejects.toThrow('--body - must hold a JSON object');
    await expect(buildBody({ body: '/nonexistent/body.json' }, async () => '')).rejects.toThrow('cannot read --body /nonexistent/body.json: ENOENT');
  });

  it('shows progress as plain lines when piped, and as one redrawn line with a bar on a terminal', () => {
    let t = 0;
    const plain: string[] = [];
    const lines = progressFor({ write: (s: string) => plain.push(s) }, () => t);
    lines.update(job('queued'));
    lines.update(job('queued'));
    t = 1500;
    lines.update(job('completed'));
    lines.stop();
    expect(plain).toEqual(['job 0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69 queued after 0.0 s\n', 'job 0b9f6f0e-6c1d-4a51-9d0a-2f1d3c4b5a69 completed after 1.5 s\n']);

    const tty: string[] = [];
    const bar = progressFor({ isTTY: true, columns: 120, write: (s: string) => tty.push(s) }, () => t);
    bar.update(job('processing'));
    bar.update(job('completed'));
    bar.stop();
    expect(tty.every((s) => s === '\n' || s.startsWith('\r\x1b[2K'))).toBe(true);
    expect(tty.at(-1)).toBe('\n');
    expect(tty[0]).toMatch(/processing +\[█{10}░{14}\]/);
    expect(tty.at(-2)).toMatch(/✔ completed +\[█{24}\] +0\.0 s {2}0b9f6f0e/);
  });
});
