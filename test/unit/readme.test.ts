import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { curlLine } from '../../src/cli/serve.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('shows exactly the curl line that the first start prints (the e2e test runs the printed one)', () => {
    expect(readme).toContain(curlLine('http://127.0.0.1:8080', 'mg_...'));
  });

  it('names the quick start and the test command that CI runs', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toMatch(/## Tests\s+```sh\s+npm test\s+```/);
    expect(readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')).toMatch(/^npm test$/m);
  });
});
