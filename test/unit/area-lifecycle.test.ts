import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/logger.ts';
import { openUnits, resumeUnits, routesOf, startUnits, stopUnits, type Unit } from '../../src/wiring/area.ts';

// The lifecycle loops over the areas' units in LIFECYCLE order (src/wiring/area.ts): order, reverse order, and what one
// failing area does to the others.
const silent = createLogger('silent');

function recorder() {
  const calls: string[] = [];
  const area = (name: string, fail?: 'open' | 'start' | 'stop'): Unit => ({
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

describe('lifecycle of the units', () => {
  it('opens, starts and resumes in table order and stops in reverse order', async () => {
    const { calls, area } = recorder();
    const areas = [area('state'), area('servers'), area('logs')];
    await openUnits(areas, silent);
    await startUnits(areas, silent, { engineUp: false });
    await resumeUnits(areas, silent);
    await stopUnits(areas, silent);
    expect(calls).toEqual([
      'open state',
      'open servers',
      'open logs',
      'start state down',
      'start servers down',
      'start logs down',
      'resume state',
      'resume servers',
      'resume logs',
      'stop logs',
      'stop servers',
      'stop state',
    ]);
  });

  it('a failing open or start ends the run with the error as it was thrown (its code kept)', async () => {
    const { calls, area } = recorder();
    const err = await openUnits([area('a'), area('servers', 'open'), area('c')], silent).catch((e: unknown) => e);
    expect(err).toMatchObject({ message: 'servers cannot open', code: 'EADDRINUSE' });
    expect(calls).toEqual(['open a', 'open servers']);
    await expect(startUnits([area('x', 'start'), area('y')], silent, { engineUp: true })).rejects.toThrow(
      'x cannot start',
    );
    expect(calls).not.toContain('start y up');
  });

  it('a failing stop does not keep the other areas from stopping; the first failure is thrown at the end', async () => {
    const { calls, area } = recorder();
    const areas = [area('state'), area('git', 'stop'), area('servers'), area('logs', 'stop')];
    await expect(stopUnits(areas, silent)).rejects.toThrow('logs cannot stop');
    expect(calls).toEqual(['stop logs', 'stop servers', 'stop git', 'stop state']);
  });

  it('areas without hooks or routes are skipped; route groups come out in table order', async () => {
    const g1 = { id: 1 } as never;
    const g2 = { id: 2 } as never;
    const g3 = { id: 3 } as never;
    const areas: Unit[] = [{ name: 'a', routes: [g1, g2] }, { name: 'b' }, { name: 'c', routes: [g3] }];
    expect(routesOf(areas)).toEqual([g1, g2, g3]);
    await openUnits(areas, silent);
    await startUnits(areas, silent, { engineUp: true });
    await stopUnits(areas, silent);
  });
});
