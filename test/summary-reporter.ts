import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `N passed, N failed, N skipped`, which CI reads as the
 * closing count whatever the terminal colours of the default reporter.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed' || state === 'failed') count[state]++;
        else count.skipped++;
      }
      // A file that failed to load has no tests but is a failure.
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) count.failed++;
    }
    process.stdout.write(`\n${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
