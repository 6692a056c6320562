import { describe, it, expect } from 'vitest';
import { createLogger } from '../../src/shared/logger.ts';
import { openUnits as openAreas, resumeUnits as resumeAreas, routesOf, startUnits as startAreas, stopUnits as stopAreas, type Unit as Area } from '../../src/wiring/area.ts';

// The lifecycle loops of the areas table (src/wiring/area.ts): order, reverse order, and what one
// failing area does to the others.
const silent = createLogger('silent');

function recorder() {
  const calls: string[] = [];
  const area = (name: string, fail?: 'open' | 'start' | 'stop'): Area => ({
    name,
    open: () => {
      calls.push(`open ${name}`);
      if (fail === 'open') throw Object.assign(new Error(`${name} cannot open`), { code: 'EADDRINUSE' });
    },
    start: async ({ engineUp }) => {
      await new Promise((r) => setImmediate(r));
      calls.push(`start ${name} ${engineUp ? 'up' : 'down'}`);
      if (fail === 'start') throw new Error(`${name} cannot start`);
    },
    resume: () => void calls.push(`resume ${name}`),
    stop: async () => {
      await new Promise((r) => setImmediate(r));
      calls.push(`stop ${name}`);
      if (fail === 'stop') throw new Error(`${name} cannot stop`);
    },
  });
  return { calls, area };
}

describe('areas table', () => {
  it('opens, starts and resumes in table order and stops in reverse order', async () => {
    const { calls, area } = recorder();
    const areas = [area('state'), area('servers'), area('logs')];
    await openAreas(areas, silent);
    await startAreas(areas, silent, { engineUp: false });
    await resumeAreas(areas, silent);
    await stopAreas(areas, silent);
    expect(calls).toEqual([
      'open state', 'open servers', 'open logs',
      'start state down', 'start servers down', 'start logs down',
      'resume state', 'resume servers', 'resume logs',
      'stop logs', 'stop servers', 'stop state',
    ]);
  });

  it('a failing open or start ends the run with the error as it was thrown (its code kept)', async () => {
    const { calls, area } = recorder();
    const err = await openAreas([area('a'), area('servers', 'open'), area('c')], silent).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: 'servers cannot open', code: 'EADDRINUSE' });
    expect(calls).toEqual(['open a', 'open servers']);
    await expect(startAreas([area('x', 'start'), area('y')], silent, { engineUp: true })).rejects.toThrow('x cannot start');
    expect(calls).not.toContain('start y up');
  });

  it('a failing stop does not keep the other areas from stopping; the first failure is thrown at the end', async () => {
    const { calls, area } = recorder();
    const areas = [area('state'), area('git', 'stop'), area('servers'), area('logs', 'stop')];
    await expect(stopAreas(areas, silent)).rejects.toThrow('logs cannot stop');
    expect(calls).toEqual(['stop logs', 'stop servers', 'stop git', 'stop state']);
  });

  it('areas without hooks or routes are skipped; route groups come out in table order', async () => {
    const g1 = { id: 1 } as never;
    const g2 = { id: 2 } as never;
    const g3 = { id: 3 } as never;
    const areas: Area[] = [{ name: 'a', routes: [g1, g2] }, { name: 'b' }, { name: 'c', routes: [g3] }];
    expect(routesOf(areas)).toEqual([g1, g2, g3]);
    await openAreas(areas, silent);
    await startAreas(areas, silent, { engineUp: true });
    await stopAreas(areas, silent);
  });
});
