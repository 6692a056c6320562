import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The order vitest hands test files to its workers (vitest.config.ts): group by group (sequence.groupOrder),
// the first-use project first inside its group (the later groups need the images it builds, and its
// builds are the longest step of a run from scratch), then the longest files first, so that no long
// file starts last and keeps one worker busy while the other has nothing left. A file's length is what
// vitest's results cache holds from this machine's last run of it, else what test/file-durations.json
// recorded (a fresh clone has no cache: CI), else unknown, which goes first, as vitest's own sequencer does.

/** The project whose files start first in their group. */
export const RUNS_FIRST = 'first-use';

/** Seconds per file (path from the repository root), from a recorded run: `npm run test:durations` writes it. */
export const DURATIONS_FILE = new URL('../file-durations.json', import.meta.url);
const recorded: Record<string, number> = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));

export class LongestFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const expectedMs = (spec: TestSpecification): number => {
      const path = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`)?.duration;
      if (cached !== undefined) return cached;
      const seconds = recorded[path];
      return seconds === undefined ? Number.MAX_SAFE_INTEGER : seconds * 1000;
    };
    const first = (spec: TestSpecification) => (spec.project.name === RUNS_FIRST ? 0 : 1);
    const keyed = files.map((spec) => ({ spec, ms: expectedMs(spec) }));
    keyed.sort(
      (a, b) =>
        a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder ||
        first(a.spec) - first(b.spec) ||
        b.ms - a.ms,
    );
    return keyed.map((k) => k.spec);
  }
}
