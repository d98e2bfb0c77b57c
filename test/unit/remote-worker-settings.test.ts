import { describe, expect, it } from 'vitest';
import { remoteWorkerSettings } from '../../src/config/remote-worker-settings.js';

describe('mediagen remote-worker settings', () => {
  it('takes flags over MEDIAGEN_URL and MEDIAGEN_WORKER_TOKEN, with defaults for the rest', () => {
    const env = { MEDIAGEN_URL: 'http://env.example:8080', MEDIAGEN_WORKER_TOKEN: 'mgw_env' };
    const s = remoteWorkerSettings({}, env);
    expect(s).toMatchObject({ token: 'mgw_env', models: undefined, pool: undefined, concurrency: 1 });
    expect(s.server.href).toBe('http://env.example:8080/');
    expect(s.workerId.length).toBeGreaterThan(0);
    expect(s.config).toMatchObject({ engineLatencyMs: 2000, shutdownGraceMs: 30_000, inputMaxBytes: 50 * 1024 * 1024 });
    const f = remoteWorkerSettings({ server: 'https://gen.example/api', token: 'mgw_flag', models: ['image/*'], pool: 'gpu-a', concurrency: '4', 'worker-id': 'box-1', 'engine-latency-ms': '10' }, env);
    expect(f).toMatchObject({ token: 'mgw_flag', models: ['image/*'], pool: 'gpu-a', concurrency: 4, workerId: 'box-1' });
    expect(f.server.href).toBe('https://gen.example/api');
    expect(f.config.engineLatencyMs).toBe(10);
  });

  it("reads serve's shared settings from their own variables, and no config file", () => {
    const s = remoteWorkerSettings({}, { MEDIAGEN_URL: 'http://a', MEDIAGEN_WORKER_TOKEN: 'mgw_x', MEDIAGEN_INPUT_MAX_BYTES: '4096', MEDIAGEN_CONFIG: '/nonexistent.json', MEDIAGEN_PORT: 'not a port' });
    expect(s.config.inputMaxBytes).toBe(4096);
  });

  it.each([
    [{}, /--server or MEDIAGEN_URL/],
    [{ server: 'http://a' }, /--token or MEDIAGEN_WORKER_TOKEN/],
    [{ server: 'ftp://a', token: 'mgw_x' }, /--server must be an http\(s\) URL/],
    [{ server: 'http://u:p@a', token: 'mgw_x' }, /must not carry credentials/],
    [{ server: 'http://a', token: 'mg_apitoken' }, /that is an API token/],
    [{ server: 'http://a', token: 'has space' }, /printable ASCII/],
    [{ server: 'http://a', token: 'mgw_x', concurrency: '33' }, /--concurrency must be an integer from 1 to 32/],
    [{ server: 'http://a', token: 'mgw_x', concurrency: '1.5' }, /--concurrency/],
    [{ server: 'http://a', token: 'mgw_x', pool: 'x'.repeat(101) }, /--pool must be 1 to 100/],
    [{ server: 'http://a', token: 'mgw_x', 'engine-latency-ms': '-1' }, /--engine-latency-ms/],
  ])('refuses %j', (flags, message) => {
    expect(() => remoteWorkerSettings(flags, {})).toThrow(message);
  });
});
