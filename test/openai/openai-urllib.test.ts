import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { backends } from '../helpers/backends.js';
import { startLive } from './openai-live.js';

const run = promisify(execFile);

describe.each(backends)('a plain python3 urllib client against a live server on $name', { timeout: 180_000 }, (backend) => {
  it('generates (url, b64_json), edits a multipart file, lists models and meets each error in OpenAI\'s shape', async () => {
    const s = await startLive(backend);
    // Its failed job on a sandbox server, whose 1.1 s per status the other requests need not wait.
    const sandbox = await startLive(backend, { sandbox: true });
    try {
      const { stdout } = await run('python3', [join(__dirname, 'openai_urllib_client.py')], {
        env: { ...process.env, BASE_URL: s.url, TOKEN: s.t.token, FAIL_BASE_URL: sandbox.url, FAIL_TOKEN: sandbox.t.token },
        timeout: 170_000,
      }).catch((err: { stdout?: string; stderr?: string }) => {
        throw new Error(`the python client failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      });
      expect(stdout).toContain('all checks passed');
      expect(stdout).not.toContain('FAIL');
    } finally {
      await s.t.close();
      await sandbox.t.close();
    }
  });
});
