import type { Reporter, TestModule } from 'vitest/node';

// Prints the closing line CI reads: "N passed, N failed[, N skipped]", preceded by one "FAILED: " line per
// failed test (project, file, name, the error's first line) so the tail of a CI log says what broke.
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let skipped = 0;
    const failures: string[] = unhandledErrors.map((error) => `unhandled error: ${firstLine(error)}`);
    for (const mod of testModules) {
      const where = `${mod.project.name} ${mod.relativeModuleId}`;
      // A file that failed to load has no tests, and one whose beforeAll failed has its tests skipped:
      // either counts as one failure (its tests are not counted as passed or failed on its behalf).
      const tests = [...mod.children.allTests()];
      if (mod.state() === 'failed' && !tests.some((t) => t.result().state === 'failed')) {
        const errors = [...mod.errors(), ...[...mod.children.allSuites()].flatMap((suite) => suite.errors())];
        failures.push(
          `${where}: ${errors.map(firstLine).join('; ') || (tests.length ? 'its setup failed' : 'failed to load')}`,
        );
      }
      for (const test of mod.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') passed++;
        else if (result.state === 'failed')
          failures.push(`${where} > ${test.fullName}: ${(result.errors ?? []).map(firstLine).join('; ')}`);
        else skipped++;
      }
    }
    const lines = failures.map((failure) => `FAILED: ${failure}\n`).join('');
    process.stdout.write(
      `\n${lines}${passed} passed, ${failures.length} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}

function firstLine(error: unknown): string {
  const text =
    error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)
      ? String((error as { message: unknown }).message)
      : String(error);
  return (text.split('\n')[0] ?? '').slice(0, 300);
}
