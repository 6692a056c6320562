import { defineConfig } from 'vitest/config';

// Three groups, run one after the other:
// - `first-use` (test/first-use/) goes first and alone: it is where the emulator builds the Debian-based
//   images on first use (CI starts with none: SCALINGO_EMULATOR_TEST_FROM_SCRATCH=1), so every later file
//   finds them built.
// - `suite`: everything else, two files at a time.
// - `engine-wide` last and alone: files that change the whole engine's state. The swarm test makes the
//   machine's engine a swarm manager and leaves the swarm at its end; containers on a bridge network made
//   while the engine was in the swarm lose their DNS names when it leaves (an app then no longer resolves its
//   addon's host: seen in a from-scratch run, reproduced by hand, docs/architecture.md), so no other file may
//   run beside it.
const ENGINE_WIDE = ['test/docker/swarm-runtime.docker.test.ts'];
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
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/first-use/**', ...ENGINE_WIDE, '**/node_modules/**'],
          sequence: { groupOrder: 1 },
        },
      },
      { test: { ...shared, name: 'engine-wide', include: ENGINE_WIDE, sequence: { groupOrder: 2 } } },
    ],
  },
});
