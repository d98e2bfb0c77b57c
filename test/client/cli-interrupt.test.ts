import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Mediagen } from '../../packages/client/src/index.js';
import { EXIT } from '../../packages/client/src/cli/exit.js';
import { generateCommand } from '../../packages/client/src/cli/generate.js';
import type { ClientContext } from '../../packages/client/src/cli/context.js';
import { startStub } from '../client/stub.js';
import type { Stub } from '../client/stub.js';

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

/** Ctrl-C in `mediagen generate --wait` before the server has answered the POST. */
describe('mediagen generate interrupted before the first answer', () => {
  it('exits 130 with one line, not a stack', async () => {
    // The POST is never answered.
    stub = await startStub(() => undefined);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const url = stub.url;
    const ctx: ClientContext = {
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: stderr as unknown as NodeJS.WriteStream,
      client: () => new Mediagen({ baseUrl: url, token: 't' }),
    };
    // Only the command's own SIGINT listener hears the emitted signal.
    const others = process.listeners('SIGINT');
    process.removeAllListeners('SIGINT');
    try {
      const running = generateCommand(ctx, ['image/vendor-a/model-a-2/medium', '--prompt', 'x', '--wait', '-q']);
      while (stub.seen.length === 0) await new Promise((r) => setTimeout(r, 10));
      process.emit('SIGINT');
      expect(await running).toBe(EXIT.interrupted);
    } finally {
      process.removeAllListeners('SIGINT');
      for (const l of others) process.on('SIGINT', l);
    }
    expect(err).toBe("mediagen: interrupted before the server's answer; a job may have been created ('mediagen jobs list')\n");
  });
});
