import { defineConfig } from 'vitest/config';

// The single-file loop without Docker: `npx vitest run -c vitest.no-docker.config.ts test/unit/<file>.test.ts`.
// vitest.config.ts's global setup pings the engine and builds the base image before any file runs, which a file
// that uses a fake runtime (most of test/unit and test/modules) never needs. This config has no global setup and
// takes only those two folders: a file there that needs Docker fails here (the engine or the image is missing), so
// run it with the main config. CONTRIBUTING.md, "Set up, run, test".
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/modules/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    maxWorkers: 2,
  },
});
