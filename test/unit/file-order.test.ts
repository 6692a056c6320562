import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type TestSpecification, type Vitest } from 'vitest/node';
import { DURATIONS_FILE, LongestFirst, RUNS_FIRST } from '../support/file-order.ts';

// The order vitest.config.ts hands test files to its workers: group by group, the first-use project first in
// its group, then the longest files first by this machine's results cache, else by test/file-durations.json,
// unknown files first.
const ROOT = '/repo';
const recorded: Record<string, number> = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
const [longRecorded, shortRecorded] = Object.entries(recorded)
  .filter(([path]) => !path.startsWith('test/first-use/'))
  .sort((a, b) => b[1] - a[1])
  .map(([path]) => path)
  .filter((_, i, all) => i === 0 || i === all.length - 1);

const spec = (project: string, groupOrder: number, path: string) =>
  ({
    moduleId: join(ROOT, path),
    project: { name: project, config: { sequence: { groupOrder } } },
  }) as unknown as TestSpecification;
const sequencer = (cachedMs: Record<string, number>) =>
  new LongestFirst({
    config: { root: ROOT },
    cache: { getFileTestResults: (key: string) => (key in cachedMs ? { duration: cachedMs[key] } : undefined) },
  } as unknown as Vitest);
const order = async (s: LongestFirst, specs: TestSpecification[]) =>
  (await s.sort(specs)).map((x) => `${x.project.name}:${x.moduleId.slice(ROOT.length + 1)}`);

describe('test file order (test/support/file-order.ts)', () => {
  it('groups in their order, first-use first in its group, then the longest recorded files first', async () => {
    const files = [
      spec('engine-wide', 2, 'test/docker/swarm-runtime.docker.test.ts'),
      spec('suite', 1, shortRecorded),
      spec('suite', 1, longRecorded),
      spec('no-debian-image', 0, shortRecorded),
      spec('no-debian-image', 0, longRecorded),
      spec(RUNS_FIRST, 0, 'test/first-use/images-on-first-use.test.ts'),
    ];
    expect(await order(sequencer({}), files)).toEqual([
      `${RUNS_FIRST}:test/first-use/images-on-first-use.test.ts`,
      `no-debian-image:${longRecorded}`,
      `no-debian-image:${shortRecorded}`,
      `suite:${longRecorded}`,
      `suite:${shortRecorded}`,
      'engine-wide:test/docker/swarm-runtime.docker.test.ts',
    ]);
  });

  it("this machine's last run outranks the recorded figures; a file neither knows goes first", async () => {
    const files = [
      spec('suite', 1, longRecorded),
      spec('suite', 1, shortRecorded),
      spec('suite', 1, 'test/docker/not-recorded.test.ts'),
    ];
    const cached = sequencer({
      [`suite:${shortRecorded}`]: (recorded[longRecorded] + 1) * 1000,
      [`suite:${longRecorded}`]: 1,
    });
    expect(await order(cached, files)).toEqual([
      'suite:test/docker/not-recorded.test.ts',
      `suite:${shortRecorded}`,
      `suite:${longRecorded}`,
    ]);
  });
});
