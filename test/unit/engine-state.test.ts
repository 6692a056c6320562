import { describe, expect, it } from 'vitest';
import { createEngineState } from '../../src/runtime/engine-state.ts';
import { EngineUnavailableError, isEngineUnreachable } from '../../src/runtime/runtime.ts';

const unreachable = () => Object.assign(new Error('connect ENOENT /x.sock'), { code: 'ENOENT', syscall: 'connect' });

async function until(fn: () => boolean, ms = 3000): Promise<void> {
  for (const end = Date.now() + ms; !fn(); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > end) throw new Error('timed out');
}

describe('engine state', () => {
  it('reports down when a call finds the engine unreachable, pings until it answers, then reports up', async () => {
    let answering = true;
    let pings = 0;
    const s = createEngineState({
      ping: async () => {
        pings++;
        if (!answering) throw unreachable();
      },
      retryMs: 20,
    });
    const seen: string[] = [];
    s.onChange((x) => seen.push(x));
    s.noteOk();
    answering = false;
    s.noteError(new Error('a refusal by the engine, not an outage'));
    expect(s.state).toBe('up');
    s.noteError(unreachable());
    expect(s.state).toBe('down');
    expect(await s.available()).toBe(false);
    answering = true;
    await until(() => s.state === 'up');
    expect(seen).toEqual(['up', 'down', 'up']);
    const before = pings;
    expect(await s.available()).toBe(true); // freshly confirmed: no ping
    expect(pings).toBe(before);
    s.close();
  });

  it('a cut stream makes it ask at once; EngineUnavailableError is an unreachable engine', async () => {
    const s = createEngineState({ ping: async () => Promise.reject(unreachable()), retryMs: 10_000 });
    s.suspect();
    await until(() => s.state === 'down');
    s.close();
    const typed = new EngineUnavailableError(unreachable());
    expect(isEngineUnreachable(typed)).toBe(true);
    expect(typed.code).toBe('ENOENT');
  });
});
