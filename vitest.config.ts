import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/leak-check.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Vitest's default is one worker fewer than the cores: one on a 2-core CI machine, where a third
    // of the CPU then sat idle (the files mostly wait on child processes, sockets and fsyncs). A
    // percentage is capped at the core count, so the number is given.
    maxWorkers: availableParallelism() + 1,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
