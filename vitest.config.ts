import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Docker-backed files share one engine on a 2-core machine: keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
