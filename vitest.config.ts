import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/leak-check.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Many files wait on child processes, sockets and fsyncs rather than the CPU: with one worker
    // per core a third of the CPU sat idle (measured on a 2-core CI machine), so run half as many again.
    maxWorkers: '150%',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
