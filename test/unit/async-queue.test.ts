import { it, expect } from 'vitest';
import { AsyncQueue } from '../../src/runtime/async-queue.ts';
it('drains 200k items quickly and in order', async () => {
  const q = new AsyncQueue<number>({ highWater: 1e9 });
  for (let i = 0; i < 200_000; i++) q.push(i);
  q.end();
  let n = 0; let ok = true;
  for await (const v of q) { if (v !== n) ok = false; n++; }
  expect(ok).toBe(true); expect(n).toBe(200_000);
});

it('asks the source to pause above the high-water mark and to resume below half of it', async () => {
  const calls: boolean[] = [];
  const q = new AsyncQueue<number>({ highWater: 10, onPressure: (p) => calls.push(p) });
  for (let i = 0; i < 25; i++) q.push(i);
  expect(calls).toEqual([true]);
  const it = q[Symbol.asyncIterator]();
  for (let i = 0; i < 20; i++) await it.next();
  expect(calls).toEqual([true, false]);
});
