import { existsSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { OPTIONS } from '../../src/config/options.js';
import { storeLabel } from '../../src/cli/serve.js';
import { TEST_DATABASE_URL, createPostgresDatabase } from '../helpers/backends.js';
import { RUN_TIMEOUT_MS, adminJson, api, bash, cleanup, oneLineError, run, startServer, tempDir } from './binary.js';
import type { Server } from './binary.js';

const MODEL = 'image/vendor-a/model-a-2/medium';
/** A valid custom model declaration (the config file's `models`), varied by the refusal cases. */
const CUSTOM_MODEL = {
  path: 'image/acme/portrait-v2',
  kind: 'image',
  request: { type: 'object', properties: { prompt: { type: 'string', description: 'What to draw.' } }, required: ['prompt'] },
  price: { fixed: '0.01' },
  engine: 'remote:gpu',
};
const JOB_BODY = { prompt: 'a lighthouse on a cliff at dusk', aspect_ratio: '16:9', resolution: '1K' };

/** The token and curl line of the first-start banner. */
async function banner(server: Server): Promise<{ token: string; curl: string }> {
  const [, curl] = await server.waitForStdout(/^ {2}(curl .+)\n/m);
  const [, token] = await server.waitForStdout(/^ {2}(mg_[A-Za-z0-9_-]+)\n/m);
  return { token: token!, curl: curl! };
}

/** Holds a TCP port on 127.0.0.1 until closed. */
function holdPort(): Promise<NetServer & { port: number }> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(Object.assign(s, { port: (s.address() as { port: number }).port })));
  });
}

const release = (s: NetServer) => new Promise<void>((resolve) => s.close(() => resolve()));

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const s = await holdPort();
  await release(s);
  return s.port;
}

const portOf = (url: string) => Number(new URL(url).port);

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `ready` every 20 ms; fails after RUN_TIMEOUT_MS. */
async function waitUntil(ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${RUN_TIMEOUT_MS} ms`);
    await sleep(20);
  }
}

describe('mediagen serve (compiled binary)', { timeout: 60_000 }, () => {
  const held: NetServer[] = [];
  afterEach(async () => {
    await Promise.all(held.splice(0).map(release));
    await cleanup();
  });

  describe('first start', () => {
    it('prints the token once with a curl line that creates a job; a second start prints no token', async () => {
      const dir = tempDir();
      const server = await startServer(['--port', '0', '--data-dir', dir]);
      const { token, curl } = await banner(server);
      expect(server.stdout().split('\n')[0]).toBe(`mediagen: serving ${server.url} (store ${dir})`);
      expect(server.stdout()).toContain('The token is shown only this once');
      expect(curl.startsWith(`curl -s -X POST ${server.url}/generate/${MODEL} `)).toBe(true);
      expect(curl).toContain(`Bearer ${token}`);

      const res = await bash(curl);
      expect(res.code, res.stderr).toBe(0);
      const job = JSON.parse(res.stdout) as Record<string, unknown>;
      expect(job).toMatchObject({ type: MODEL, completed_at: null, result: null });
      expect(job.job_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(typeof job.status).toBe('string');
      expect(Number.isNaN(Date.parse(job.created_at as string))).toBe(false);

      const list = await api(server.url, '/jobs', token);
      expect(list.status).toBe(200);
      expect((list.body.items as { job_id: string }[]).map((j) => j.job_id)).toEqual([job.job_id]);

      // The token never reaches the log.
      expect(server.stderr()).not.toContain(token);
      expect(await server.stop()).toEqual({ code: 0, signal: null });

      const again = await startServer(['--port', '0', '--data-dir', dir]);
      expect((await api(again.url, '/jobs', token)).status).toBe(200);
      expect(await again.stop()).toEqual({ code: 0, signal: null });
      expect(again.stdout().split('\n')[0]).toBe(`mediagen: serving ${again.url} (store ${dir})`);
      expect(again.stdout()).not.toContain('mg_');
    });

    it('the request log never holds a token or a prompt, even one sent in a query string', async () => {
      const server = await startServer(['--port', '0', '--data-dir', tempDir()]);
      const { token } = await banner(server);
      const secretPrompt = 'a-very-private-prompt-31337';
      await api(server.url, `/jobs?access_token=${token}&prompt=${secretPrompt}`, token);
      const created = await fetch(`${server.url}/generate/${MODEL}?note=${secretPrompt}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: secretPrompt, aspect_ratio: '1:1', resolution: '1K' }),
      });
      await created.arrayBuffer();
      expect(await server.stop()).toEqual({ code: 0, signal: null });
      expect(server.stderr()).toContain('/jobs');
      expect(server.stderr()).not.toContain(token);
      expect(server.stderr()).not.toContain(secretPrompt);
    });

    it('a store whose workspaces were made with the admin CLI gets no bootstrap token', async () => {
      const dir = tempDir();
      await adminJson(dir, ['workspace', 'create', '--name', 'acme', '--owner', 'owner@acme.test']);
      const server = await startServer(['--port', '0', '--data-dir', dir]);
      expect(await server.stop()).toEqual({ code: 0, signal: null });
      expect(server.stdout()).not.toMatch(/mg_|curl/);
    });

    it('a start that cannot listen exits 1 with one line and does not use up the first-start token', async () => {
      const dir = tempDir();
      const busy = await holdPort();
      held.push(busy);
      const r = await run(['serve', '--port', String(busy.port), '--data-dir', dir]);
      expect(oneLineError(r)).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1 port ${busy.port}: .*EADDRINUSE`));
      expect(r.stdout).toBe('');

      const server = await startServer(['--port', '0', '--data-dir', dir]);
      const { token } = await banner(server);
      expect((await api(server.url, '/jobs', token)).status).toBe(200);
    });
  });

  describe('settings', () => {
    it('--host and --port choose the listening address', async () => {
      const port = await freePort();
      const server = await startServer(['--host', '127.0.0.1', '--port', String(port), '--data-dir', tempDir()]);
      expect(server.url).toBe(`http://127.0.0.1:${port}`);
      const { token } = await banner(server);
      expect((await api(`http://127.0.0.1:${port}`, '/jobs', token)).status).toBe(200);

      const any = await startServer(['--host', '0.0.0.0', '--port', '0', '--data-dir', tempDir()]);
      expect(any.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await api(any.url, '/jobs', 'mg_nope')).status).toBe(401);
    });

    it('MEDIAGEN_PORT sets the port, and --port overrides it', async () => {
      const port = await freePort();
      const byEnv = await startServer(['--data-dir', tempDir()], { env: { MEDIAGEN_PORT: String(port) } });
      expect(portOf(byEnv.url)).toBe(port);
      expect((await api(byEnv.url, '/jobs', 'mg_nope')).status).toBe(401);

      // The environment names a port that is taken; the flag wins, so the start succeeds.
      const busy = await holdPort();
      held.push(busy);
      const byFlag = await startServer(['--port', '0', '--data-dir', tempDir()], { env: { MEDIAGEN_PORT: String(busy.port) } });
      expect(portOf(byFlag.url)).not.toBe(busy.port);
      expect((await api(byFlag.url, '/jobs', 'mg_nope')).status).toBe(401);

      const bad = await run(['serve', '--data-dir', tempDir()], { env: { MEDIAGEN_PORT: 'eighty' } });
      expect(oneLineError(bad)).toMatch(/MEDIAGEN_PORT must be an integer/);
    });

    it('--config FILE and MEDIAGEN_CONFIG supply port, host, data dir and log level', async () => {
      const dir = tempDir();
      const file = join(tempDir(), 'mediagen.json');
      writeFileSync(file, JSON.stringify({ port: 0, host: '127.0.0.1', data_dir: dir, log_level: 'silent' }));

      const byFlag = await startServer(['--config', file]);
      expect(byFlag.stdout().split('\n')[0]).toBe(`mediagen: serving ${byFlag.url} (store ${dir})`);
      const { token } = await banner(byFlag);
      expect((await api(byFlag.url, '/jobs', token)).status).toBe(200);
      expect(await byFlag.stop()).toEqual({ code: 0, signal: null });
      expect(byFlag.stderr()).toBe('');

      const byEnv = await startServer([], { env: { MEDIAGEN_CONFIG: file } });
      expect(byEnv.stdout().split('\n')[0]).toBe(`mediagen: serving ${byEnv.url} (store ${dir})`);
      expect((await api(byEnv.url, '/jobs', token)).status).toBe(200);
    });

    it.each([
      ['an unknown key', { port: 0, prot: 1 }, /mediagen\.json: unknown key 'prot'/],
      ['a bad port', { port: 'eighty' }, /mediagen\.json: port must be an integer from 0 to 65535, got "eighty"/],
      ['a port out of range', { port: 70000 }, /mediagen\.json: port must be an integer/],
      ['a bad log level', { log_level: 'loud' }, /mediagen\.json: log_level must be one of/],
      ['a bad public URL', { public_url: 'ftp://x' }, /mediagen\.json: public_url must be an absolute http\(s\) URL/],
      ['a value that is not JSON', '{port:', /cannot read config file .*mediagen\.json/],
      [
        'a deprecation with a bad migration URL',
        { deprecations: [{ model: 'video/vendor-f/model-f', sunset_date: '2027-01-01', migration_url: 'ftp://x' }] },
        /mediagen\.json: deprecations\[0\]\.migration_url must be an absolute http\(s\) URL/,
      ],
      [
        'a model bound to an engine the server does not have',
        { port: 0, model_engines: { 'video/vendor-f/model-f': 'gpu' } },
        /model video\/vendor-f\/model-f is bound to engine 'gpu' \(model_engines\), which this server does not have/,
      ],
      [
        'a model_engines pattern that matches no model',
        { port: 0, model_engines: { 'text/*': 'remote:gpu' } },
        /^mediagen: model_engines: pattern 'text\/\*' matches no model that takes requests/,
      ],
      [
        'a custom model with a bad request schema, naming the field',
        { port: 0, models: [{ ...CUSTOM_MODEL, request: { type: 'object', properties: { width: { type: 'integer', maximum: 'big', description: 'Width.' } } } }] },
        /^mediagen: models\[0\] \(image\/acme\/portrait-v2\)\.request\.properties\.width\.maximum: must be a number$/,
      ],
      [
        'a custom model bound to the built-in engine',
        { port: 0, models: [{ ...CUSTOM_MODEL, engine: 'local' }] },
        /^mediagen: models\[0\] \(image\/acme\/portrait-v2\)\.engine: 'local' is the built-in engine, which renders only the built-in models/,
      ],
      [
        'a custom model on a built-in path',
        { port: 0, models: [{ ...CUSTOM_MODEL, path: 'image/vendor-b/model-b-1' }] },
        /^mediagen: models\[0\] \(image\/vendor-b\/model-b-1\): image\/vendor-b\/model-b-1 is a built-in model/,
      ],
    ])('a config file with %s makes serve exit 1 with a clear message', async (_what, content, message) => {
      const dir = tempDir();
      const file = join(dir, 'mediagen.json');
      writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
      const r = await run(['serve', '--config', file, '--data-dir', join(dir, 'data')]);
      expect(oneLineError(r)).toMatch(message);
      expect(r.stdout).toBe('');
    });

    it('the python worker example config starts: its custom models are offered and their jobs wait for remote workers', async () => {
      const dir = tempDir();
      const example = fileURLToPath(new URL('../../examples/python-worker/mediagen.json', import.meta.url));
      const server = await startServer(['--config', example, '--port', '0', '--data-dir', dir]);
      const { token } = await banner(server);
      const model = await api(server.url, `/models/${encodeURIComponent('image/acme/gradient-v1')}`, token);
      expect(model.body).toMatchObject({ id: 'image/acme/gradient-v1', price: { rates_micro_usd: { per_megapixel: 1000 } } });
      const created = await fetch(`${server.url}/generate/audio/acme/tone-v1`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ duration: 1 }),
      });
      expect(created.status).toBe(200);
      const job = (await created.json()) as { job_id: string };
      await sleep(300);
      expect((await api(server.url, `/jobs/${job.job_id}`, token)).body).toMatchObject({ type: 'audio/acme/tone-v1', status: 'queued' });
      expect(await server.stop()).toEqual({ code: 0, signal: null });
    });

    it.each([
      ['--port', '70000', /--port must be an integer from 0 to 65535/],
      ['--public-url', 'not a url', /--public-url must be an absolute http\(s\) URL/],
      ['--log-level', 'loud', /--log-level must be one of/],
    ])('serve %s %s exits 1 with a one-line message', async (flag, value, message) => {
      const r = await run(['serve', flag, value, '--data-dir', tempDir()]);
      expect(oneLineError(r)).toMatch(message);
    });

    it('--public-url is used in the printed curl line; the serving line still shows the bound address', async () => {
      const dir = tempDir();
      const server = await startServer(['--port', '0', '--data-dir', dir, '--public-url', 'https://gen.example.com/']);
      const { curl, token } = await banner(server);
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.stdout().split('\n')[0]).toBe(`mediagen: serving ${server.url} (public URL https://gen.example.com, store ${dir})`);
      expect(curl.startsWith(`curl -s -X POST https://gen.example.com/generate/${MODEL} `)).toBe(true);
      expect(curl).not.toContain(server.url);
      // The same command against the bound address creates a job.
      const res = await bash(curl.replace('https://gen.example.com', server.url));
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ type: MODEL, completed_at: null, result: null });
      expect((await api(server.url, '/jobs', token)).body.items).toHaveLength(1);
    });
  });

  describe('shutdown', () => {
    it('on SIGTERM finishes the request in flight, answers it completely and exits 0', async () => {
      const dir = tempDir();
      const server = await startServer(['--port', '0', '--data-dir', dir]);
      const { token } = await banner(server);
      const { hostname, port } = new URL(server.url);

      // Large but under the 128 KiB body limit: a valid request padded with JSON whitespace.
      const body = Buffer.from(JSON.stringify(JOB_BODY) + ' '.repeat(120_000));
      const head =
        `POST /generate/${MODEL} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
        `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`;

      const socket = connect(Number(port), hostname);
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      const ended = new Promise<void>((resolve, reject) => {
        socket.once('end', resolve);
        socket.once('error', reject);
      });
      try {
        await new Promise<void>((resolve) => socket.once('connect', resolve));
        socket.write(head);
        socket.write(body.subarray(0, body.length / 2));
        // The server has the request (its log says so) before the signal is sent.
        await waitUntil(() => server.stderr().includes('incoming request'), 'the request log');

        server.child.kill('SIGTERM');
        await waitUntil(() => server.stderr().includes('shutting down'), 'the shutdown log');
        // It waits for the request rather than exiting under it.
        await sleep(300);
        expect(server.child.exitCode).toBeNull();
        // New connections are no longer accepted while it drains.
        const refused = await new Promise<boolean>((resolve) => {
          const probe = connect(Number(port), hostname);
          probe.once('connect', () => {
            probe.destroy();
            resolve(false);
          });
          probe.once('error', () => resolve(true));
        });
        expect(refused).toBe(true);

        socket.write(body.subarray(body.length / 2));
        await withTimeout(ended, RUN_TIMEOUT_MS, 'the response');
      } finally {
        socket.destroy();
      }

      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = raw.slice(0, split).split('\r\n');
      const responseBody = raw.slice(split + 4);
      expect(statusLine).toBe('HTTP/1.1 200 OK');
      const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      expect(Number(headers['content-length'])).toBe(Buffer.byteLength(responseBody));
      // The client is told not to reuse the connection, so it cannot hold the shutdown up.
      expect(headers.connection).toBe('close');
      const job = JSON.parse(responseBody) as { job_id: string; status: string };
      expect(job).toMatchObject({ type: MODEL, completed_at: null, result: null });

      expect(await withTimeout(server.exited(), RUN_TIMEOUT_MS, 'the exit')).toEqual({ code: 0, signal: null });

      // The job was stored before the process went away.
      const again = await startServer(['--port', '0', '--data-dir', dir]);
      const list = await api(again.url, '/jobs', token);
      expect((list.body.items as { job_id: string }[]).map((j) => j.job_id)).toEqual([job.job_id]);
    });

    it.each(['SIGTERM', 'SIGINT'] as const)('an idle server exits 0 on %s', async (signal) => {
      const server = await startServer(['--port', '0', '--data-dir', tempDir()]);
      const { token } = await banner(server);
      // A kept-alive idle connection does not hold the shutdown up.
      expect((await api(server.url, '/jobs', token)).status).toBe(200);
      expect(await withTimeout(server.stop(signal), RUN_TIMEOUT_MS, 'the exit')).toEqual({ code: 0, signal: null });
    });
  });

  describe('help', () => {
    it('mediagen --help prints the usage of every command and exits 0', async () => {
      for (const args of [['--help'], ['-h'], ['help'], []]) {
        const r = await run(args);
        expect(r.code, args.join(' ')).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout).toMatch(/^mediagen: /);
        expect(r.stdout).toContain('mediagen serve [options]');
        expect(r.stdout).toContain('mediagen admin <command>');
        expect(r.stdout).toContain('Usage: mediagen serve');
        expect(r.stdout).toContain('Usage: mediagen admin');
      }
    });

    it('mediagen serve --help lists every option with its environment variable and exits 0', async () => {
      for (const flag of ['--help', '-h']) {
        const r = await run(['serve', flag]);
        expect(r.code).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout).toMatch(/^Usage: mediagen serve/);
        expect(r.stdout).toContain('--config FILE');
        for (const o of OPTIONS) {
          expect(r.stdout).toContain(`--${o.flag}`);
          expect(r.stdout).toContain(o.env);
        }
      }
    });

    it('mediagen admin --help lists every command and exits 0', async () => {
      const r = await run(['admin', '--help']);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^Usage: mediagen admin/);
      for (const c of ['workspace create', 'workspace set', 'member add', 'token create', 'token list', 'token revoke']) {
        expect(r.stdout).toContain(c);
      }
      // --help after a command shows that command's help, and opens no store.
      const dir = tempDir();
      const sub = await run(['admin', 'token', 'list', '--help', '--data-dir', join(dir, 'x')]);
      expect(sub.code).toBe(0);
      expect(sub.stdout).toMatch(/^Usage: mediagen admin token list \[options\]\n/);
      expect(sub.stdout).toContain('--workspace <W>');
      expect(existsSync(join(dir, 'x'))).toBe(false);
    });
  });

  it('names the PostgreSQL server and database on its first line with --database-url, never the user or password', async () => {
    expect(storeLabel({ dataDir: '/d', databaseUrl: 'postgres://app:s3cret@db.internal:6432/mediagen?sslmode=require' })).toBe('postgresql://db.internal:6432/mediagen');
    expect(storeLabel({ dataDir: '/d', databaseUrl: undefined })).toBe('/d');
    if (!TEST_DATABASE_URL) return;
    const db = await createPostgresDatabase();
    try {
      const url = new URL(db.url);
      url.password = 'not-a-real-password';
      const server = await startServer(['--port', '0', '--data-dir', tempDir(), '--database-url', url.toString()]);
      const first = server.stdout().split('\n')[0]!;
      expect(first).toBe(`mediagen: serving ${server.url} (store postgresql://${url.host}${url.pathname})`);
      expect(server.stdout()).not.toContain('not-a-real-password');
      await server.stop();
    } finally {
      await db.drop();
    }
  });
});
