import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, errorOf } from '../helpers/app.js';
import type { TestApp } from '../helpers/app.js';

const URL_A2 = '/generate/image/vendor-a/model-a-2/medium';

describe('every error is JSON with an error string', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ bodyLimitBytes: 4096 });
  });
  afterAll(() => t.close());

  const post = (payload: string | Buffer, contentType?: string) =>
    t.app.inject({
      method: 'POST',
      url: URL_A2,
      headers: { authorization: `Bearer ${t.token}`, ...(contentType ? { 'content-type': contentType } : {}) },
      payload,
    });

  it.each([
    ['truncated JSON', '{"prompt":'],
    ['a trailing comma', '{"prompt":"x",}'],
    ['single quotes', "{'prompt':'x'}"],
    ['plain text', 'hello'],
  ])('malformed JSON (%s) is 400', async (_name, payload) => {
    expect(errorOf(await post(payload, 'application/json'), 400)).toMatch(/not valid JSON/);
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"prompt"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('a body that is %s rather than an object is 400', async (_name, payload) => {
    expect(errorOf(await post(payload, 'application/json'), 400)).toMatch(/JSON object/);
  });

  it('every response, errors included, carries a unique X-Request-Id', async () => {
    const a = await post('{', 'application/json');
    const b = await t.app.inject({ method: 'GET', url: '/nothing' });
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('an empty body is 400', async () => {
    expect(errorOf(await post('', 'application/json'), 400)).toMatch(/empty/);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml'])(
    'Content-Type %s is 415',
    async (type) => {
      expect(errorOf(await post('{"prompt":"x"}', type), 415)).toMatch(/application\/json/);
    },
  );

  it('a JSON body with a charset parameter is accepted', async () => {
    const res = await post(JSON.stringify({ prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }), 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(200);
  });

  it('a body over the limit is 413', async () => {
    const payload = JSON.stringify({ prompt: 'x'.repeat(5000), aspect_ratio: '1:1', resolution: '1K' });
    expect(errorOf(await post(payload, 'application/json'), 413)).toMatch(/larger/);
  });

  it('absurd nesting is 400, not a crash', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const big = await createTestApp({ bodyLimitBytes: 1024 * 1024 });
    try {
      const res = await big.app.inject({
        method: 'POST',
        url: URL_A2,
        headers: { authorization: `Bearer ${big.token}`, 'content-type': 'application/json' },
        payload: `{"prompt":${deep}}`,
      });
      expect(errorOf(res, 400)).toMatch(/nests deeper/);
    } finally {
      await big.close();
    }
  });

  it('nesting within the limit inside a free-form object is judged by the schema, not refused', async () => {
    const nested = '{"a":'.repeat(20) + '1' + '}'.repeat(20);
    const res = await t.app.inject({
      method: 'POST',
      url: '/generate/video/vendor-e/model-e-1',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      payload: `{"prompt":"x","camera_control":${nested}}`,
    });
    expect(res.statusCode).toBe(200);
  });

  it('strings containing brackets do not count as nesting', async () => {
    const res = await post(JSON.stringify({ prompt: '['.repeat(500) + '\\"{', aspect_ratio: '1:1', resolution: '1K' }), 'application/json');
    expect(res.statusCode).toBe(200);
  });

  it('__proto__ in a body is an unknown property, not a prototype', async () => {
    const res = await post('{"prompt":"x","aspect_ratio":"1:1","resolution":"1K","__proto__":{"admin":true}}', 'application/json');
    expect(errorOf(res, 400)).toMatch(/__proto__/);
  });

  it.each([
    ['GET', '/nothing-here'],
    ['POST', '/generate/image/vendor-a/model-a-2/tiny'],
    ['GET', '/generate/image/vendor-a/model-a-2/medium'],
    ['PUT', '/jobs'],
  ] as const)('an unknown route (%s %s) is 404', async (method, url) => {
    const res = await t.app.inject({ method, url, headers: { authorization: `Bearer ${t.token}` } });
    expect(errorOf(res, 404)).toMatch(/no route/);
  });

  it('a mistyped model in a generation path is 404 naming the nearest model; a path near none names none', async () => {
    const near = await t.app.inject({ method: 'POST', url: '/generate/image/vendor-a/model-a2/medium', headers: { authorization: `Bearer ${t.token}` } });
    expect(errorOf(near, 404)).toBe('no route POST /generate/image/vendor-a/model-a2/medium; did you mean /generate/image/vendor-a/model-a-2/medium?');
    const far = await t.app.inject({ method: 'POST', url: '/generate/something/else/entirely', headers: { authorization: `Bearer ${t.token}` } });
    expect(errorOf(far, 404)).toBe('no route POST /generate/something/else/entirely');
  });

  it('a path with malformed percent-encoding is 401 without a token and 404 with one, without echoing the path', async () => {
    errorOf(await t.app.inject({ method: 'GET', url: '/jobs/%E0%A4%A' }), 401);
    const res = await t.app.inject({ method: 'GET', url: '/jobs/%ZZ', headers: { authorization: `Bearer ${t.token}` } });
    expect(errorOf(res, 404)).not.toContain('%ZZ');
  });

  it('a very long job id reaches authentication and is then not found', async () => {
    const id = 'a'.repeat(900);
    errorOf(await t.app.inject({ method: 'GET', url: `/jobs/${id}` }), 401);
    const res = await t.app.inject({ method: 'GET', url: `/jobs/${id}`, headers: { authorization: `Bearer ${t.token}` } });
    expect(errorOf(res, 404).length).toBeLessThan(1000);
  });

  it.each(['gzip', 'br', 'deflate'])('a body with Content-Encoding %s is 415, not decoded as if plain', async (coding) => {
    const res = await t.app.inject({
      method: 'POST',
      url: URL_A2,
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', 'content-encoding': coding },
      payload: JSON.stringify({ prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }),
    });
    expect(errorOf(res, 415)).toMatch(/Content-Encoding/);
  });

  it.each(['latin1', 'utf-16', 'iso-8859-1'])('a JSON body declared as charset %s is 415', async (charset) => {
    expect(errorOf(await post('{"prompt":"x"}', `application/json; charset=${charset}`), 415)).toMatch(/UTF-8/);
  });

  it.each(['utf-8', 'UTF-8', '"utf-8"', 'utf8'])('charset=%s is accepted', async (charset) => {
    const res = await post(JSON.stringify({ prompt: 'café', aspect_ratio: '1:1', resolution: '1K' }), `application/json; charset=${charset}`);
    expect(res.statusCode).toBe(200);
  });

  it('a body that is not valid UTF-8 is 400 rather than silently altered', async () => {
    const bytes = Buffer.concat([Buffer.from('{"prompt":"caf'), Buffer.from([0xe9]), Buffer.from('","aspect_ratio":"1:1","resolution":"1K"}')]);
    expect(errorOf(await post(bytes, 'application/json'), 400)).toMatch(/UTF-8/);
  });

  it.each([
    ['a short bare word', 'secret-prompt-text'],
    ['a long bare word', 'SECRETPROMPT'.repeat(10)],
    ['a long object with a bad value', `{"prompt": "PT", "x": z${'SECRETPROMPT'.repeat(10)}}`],
  ])('a JSON syntax error (%s) explains itself without echoing the body back', async (_name, body) => {
    const message = errorOf(await post(body, 'application/json'), 400);
    expect(message).toMatch(/not valid JSON/);
    expect(message).not.toContain('SECRET');
    expect(message).not.toContain('secret');
  });

  it('the 413 message states the limit', async () => {
    const payload = JSON.stringify({ prompt: 'x'.repeat(5000), aspect_ratio: '1:1', resolution: '1K' });
    expect(errorOf(await post(payload, 'application/json'), 413)).toContain('4096 bytes');
  });

  it('query parameters on routes that take none are 400 naming them', async () => {
    const job = (await post(JSON.stringify({ prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }), 'application/json')).json();
    const auth = { authorization: `Bearer ${t.token}` };
    expect(errorOf(await t.app.inject({ method: 'GET', url: `/jobs/${job.job_id}?foo=1`, headers: auth }), 400)).toContain("'foo'");
    expect(errorOf(await t.app.inject({ method: 'DELETE', url: `/jobs/${job.job_id}?x=1`, headers: auth }), 400)).toContain("'x'");
    const gen = await t.app.inject({
      method: 'POST',
      url: `${URL_A2}?seed=5`,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ prompt: 'x', aspect_ratio: '1:1', resolution: '1K' }),
    });
    expect(errorOf(gen, 400)).toContain("'seed'");
  });

  it.each([
    ['garbage instead of a request line', 'GARBAGE\r\n\r\n', 400],
    ['a lower-case method', 'get /jobs HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['Content-Length with Transfer-Encoding', 'POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
    ['oversized headers', `GET /jobs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ])('a request Node cannot parse (%s) still gets a JSON error', async (_name, raw, status) => {
    const server = await createTestApp();
    try {
      await server.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = server.app.server.address() as AddressInfo;
      const response = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(raw));
        let data = '';
        socket.on('data', (d) => (data += d));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(response.split('\r\n')[0]).toContain(` ${status} `);
      const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { error: string };
      expect(body.error.length).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('a failure inside the server is a 500 that says only "internal server error"', async () => {
    const broken = await createTestApp();
    try {
      // A request that authenticates, then finds the store gone.
      const original = broken.store.jobs.listJobs.bind(broken.store.jobs);
      broken.store.jobs.listJobs = () => Promise.reject(new Error('relation "jobs" does not exist: secret detail'));
      const res = await broken.app.inject({ method: 'GET', url: '/jobs', headers: { authorization: `Bearer ${broken.token}` } });
      expect(errorOf(res, 500)).toBe('internal server error');
      broken.store.jobs.listJobs = original;
    } finally {
      await broken.close();
    }
  });

  it('random bytes as a body never crash the server', async () => {
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const alphabet = '{}[]":,0123456789.-eEtrufalsn \\u"abc';
    for (let i = 0; i < 300; i++) {
      const len = Math.floor(rand() * 60);
      let s = '';
      for (let j = 0; j < len; j++) s += alphabet[Math.floor(rand() * alphabet.length)];
      const res = await post(s, 'application/json');
      expect(res.statusCode).toBeGreaterThanOrEqual(200);
      expect(res.statusCode).toBeLessThan(500);
      if (res.statusCode !== 200) errorOf(res, res.statusCode);
    }
    expect((await t.app.inject({ method: 'GET', url: '/jobs', headers: { authorization: `Bearer ${t.token}` } })).statusCode).toBe(200);
  });
});
