import { defineConfig } from 'vitest/config';

// Two groups, run one after the other. `first-use` (test/first-use/) goes first and alone: it is
// where the emulator builds the Debian-based images on first use (CI starts with none:
// SCALINGO_EMULATOR_TEST_FROM_SCRATCH=1), so every later file finds them built.
const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    // Docker-backed files share one engine on a 2-core machine: keep parallelism modest.
    maxWorkers: 2,
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
    projects: [
      { test: { ...shared, name: 'first-use', include: ['test/first-use/**/*.test.ts'], sequence: { groupOrder: 0 } } },
      { test: { ...shared, name: 'suite', include: ['test/**/*.test.ts'], exclude: ['test/first-use/**', '**/node_modules/**'], sequence: { groupOrder: 1 } } },
    ],
  },
});
