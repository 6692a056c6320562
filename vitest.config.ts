import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/file-order.ts';

// Three groups, run one after the other (each starts its longest files first: test/support/file-order.ts):
// 1. `first-use` (test/first-use/) starts first: it is where the emulator builds the Debian-based images
//    on first use (CI starts with none: SCALINGO_EMULATOR_TEST_FROM_SCRATCH=1). Beside it, on the other
//    workers, runs `no-debian-image`: the files that need no Debian-built image (fake runtimes, no Docker,
//    or apps on the busybox stack the global setup builds), so the builds no longer leave a worker idle.
//    A file that deploys a language app (package.json, requirements.txt, Gemfile…) or provisions an addon
//    on an emulator with real servers (addons.servers: the default of `start` and `up`, not of
//    test/harness.ts) must not be listed there: from scratch it would build an image beside the
//    first-use test, which counts the builds it causes and expects them to be its own.
// 2. `suite`: everything else (it finds the images built), three files at a time (maxWorkers below).
// 3. `engine-wide` last and alone: files that change the whole engine's state. The swarm test makes the
//    machine's engine a swarm manager and leaves the swarm at its end; containers on a bridge network made
//    while the engine was in the swarm lose their DNS names when it leaves (an app then no longer resolves
//    its addon's host: seen in a from-scratch run, reproduced by hand, docs/architecture.md), so no other
//    file may run beside it.
const ENGINE_WIDE = ['test/docker/swarm-runtime.docker.test.ts'];
const FIRST_USE = ['test/first-use/**/*.test.ts'];
const inFolder = (folder: string, names: string[]) => names.map((n) => `test/${folder}/${n}.test.ts`);
const NO_DEBIAN_IMAGE = [
  'test/unit/**/*.test.ts',
  'test/modules/**/*.test.ts',
  ...inFolder('docker', [
    'autoscaler',
    'build-labels',
    'containers',
    'control-clock',
    'control-plane',
    'cron',
    'deploy',
    'domains',
    'executable',
    'executable-other-arch',
    'generated-dockerfile',
    'git-push',
    'lifecycle',
    'logs',
    'logs-restart',
    'node-image-load',
    'one-off',
    'programmatic',
    'ps-engine-state',
    'remote-engine-tls',
    'runtime',
    'runtime-contract.docker',
    'runtime-contract-tls.docker',
    'runtime-exec-stdin',
    'stats',
  ]),
  ...inFolder('e2e', [
    'cli',
    'code-cache',
    'dashboard',
    'go-client-account',
    'go-client-deploy',
    'go-client-shapes',
    'npm-client',
  ]),
  ...inFolder('reliability', [
    'access-revocation',
    'auth-matrix',
    'clock-advance',
    'concurrent-deployments',
    'control-plane',
    'data-dir-lock',
    'default-limit-sources',
    'disk-full',
    'docker-outage',
    'files-and-secrets',
    'fuzz',
    'hostile-sources',
    'http-limits',
    'kill-during-push',
    'kill9',
    'logs-filter',
    'snapshot-import',
    'ssh-endpoint',
    'websocket-frames',
  ]),
];
const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    // Docker-backed files share one engine on a 2-core machine and spend most of their time waiting on it (builds,
    // containers starting, servers answering): three at once keep both cores busy where two left them idle between
    // steps (the warm suite: 14 min with 3 workers on a machine loaded by other runs, against ~17 min with 2 on a quiet one).
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    // The engine answering and the base image (global-setup.ts); the bundle the process tests run (bundle-setup.ts).
    globalSetup: ['test/global-setup.ts', 'test/support/bundle-setup.ts'],
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
    projects: [
      { test: { ...shared, name: 'first-use', include: FIRST_USE, sequence: { groupOrder: 0 } } },
      {
        test: {
          ...shared,
          name: 'no-debian-image',
          include: NO_DEBIAN_IMAGE,
          exclude: [...ENGINE_WIDE, '**/node_modules/**'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...FIRST_USE, ...NO_DEBIAN_IMAGE, ...ENGINE_WIDE, '**/node_modules/**'],
          sequence: { groupOrder: 1 },
        },
      },
      { test: { ...shared, name: 'engine-wide', include: ENGINE_WIDE, sequence: { groupOrder: 2 } } },
    ],
  },
});
