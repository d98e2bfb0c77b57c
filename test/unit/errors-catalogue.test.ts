import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JOB_ERROR_CODES } from '../../src/engines/engine.js';
import { ERROR_CODES } from '../../src/domain/error-catalogue.js';
import { HTTP_STATUS } from '../../src/http/error-status.js';

describe('error catalogue', () => {
  it('docs/errors.md documents every code with its HTTP status', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[]) {
      expect(doc, code).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${HTTP_STATUS[code]}\\s*\\|`));
    }
  });

  it('docs/errors.md documents every job error code', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of Object.keys(JOB_ERROR_CODES)) expect(doc, code).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|`));
  });
});
