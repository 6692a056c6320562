import { expect, it } from 'vitest';
import { AsyncQueue } from '../../src/runtime/async-queue.ts';

it('drains 200k items quickly and in order', async () => {
  const q = new AsyncQueue<number>({ highWater: 1e9 });
  for (let i = 0; i < 200_000; i++) q.push(i);
  q.end();
  let n = 0;
  let ok = true;
  for await (const v of q) {
    if (v !== n) ok = false;
    n++;
  }
  expect(ok).toBe(true);
  expect(n).toBe(200_000);
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

it('takeWaiting hands over what waits at once, in order, and lets a paused source resume', async () => {
  const calls: boolean[] = [];
  const q = new AsyncQueue<number>({ highWater: 10, onPressure: (p) => calls.push(p) });
  expect(q.takeWaiting()).toEqual([]);
  for (let i = 0; i < 15; i++) q.push(i);
  const it = q[Symbol.asyncIterator]();
  expect((await it.next()).value).toBe(0);
  expect(q.takeWaiting()).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
  expect(calls).toEqual([true, false]);
  // Nothing waits now: the next item goes to the waiting consumer, then the order goes on.
  const next = it.next();
  q.push(15);
  q.push(16);
  expect((await next).value).toBe(15);
  expect(q.takeWaiting()).toEqual([16]);
  q.end();
  expect((await it.next()).done).toBe(true);
});
