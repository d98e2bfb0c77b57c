import { describe, expect, it } from 'vitest';
import { SERVE_HELP } from '../../src/cli/serve.js';
import { REMOTE_WORKER_HELP } from '../../src/cli/remote-worker-command.js';

/** An option line: its term (`--flag`, maybe `-h, ` before it and one upper-case value after), then two spaces or the line's end. */
const OPTION_LINE = /^ {2}(?:-\w, )?--[a-z0-9-]+(?: [A-Z]+)?(?: {2}|$)/;

describe('--help', () => {
  it.each([
    ['serve', SERVE_HELP],
    ['remote-worker', REMOTE_WORKER_HELP],
  ])('%s --help: no option name runs into its description', (_name, help) => {
    const options = help.split('\n').filter((l) => /^ {2}(?:-\w, )?--/.test(l));
    expect(options.length).toBeGreaterThan(5);
    expect(options.filter((l) => !OPTION_LINE.test(l))).toEqual([]);
    // A description moved to its own line starts at the column of the others.
    const lines = help.split('\n');
    for (const [i, l] of lines.entries()) if (/^ {2}--\S+(?: [A-Z]+)?$/.test(l)) expect(lines[i + 1]).toMatch(/^ {31}\S/);
  });
});
