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
    // One forked worker keeps its module graph from file to file instead of importing it afresh
    // for each: on a fresh clone on the 2-core CI machine, the suite took 785 s instead of 1,017 s
    // (Vitest's import time 29 s instead of 177 s), every test passing. Tests that need state of
    // their own make it (a store, an app, a temp dir per test); none relies on a fresh module.
    isolate: false,
    // expect.poll waits for what another process or the browser does (an upload, a status change):
    // Vitest's default of 1 s was once too short for an asset upload on the loaded CI machine. A
    // poll that passes returns at once, so a longer bound costs nothing unless the test fails.
    expect: { poll: { timeout: 10_000 } },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
