import { describe, expect, it } from 'vitest';
import { type AppRow } from '../../src/modules/apps/apps.store.ts';
import { createAutoscalerEngine } from '../../src/modules/autoscalers/autoscaler-engine.ts';
import { type AutoscalerRow, type AutoscalersStore } from '../../src/modules/autoscalers/autoscalers.store.ts';
import { type SampleRow } from '../../src/modules/stats/stats.store.ts';
import { createLogger } from '../../src/shared/logger.ts';

// The decisions of the engine, with the platform's rules (hysteresis, cool-downs, bounds, steps).
function setup(
  a: Partial<AutoscalerRow>,
  opts: { amount: number; requests?: number; up?: number; down?: number; busy?: boolean },
) {
  const row: AutoscalerRow = {
    id: 'au-1',
    app_id: 'app1',
    container_type: 'web',
    metric: 'cpu',
    target: 0.5,
    min_containers: 2,
    max_containers: 4,
    disabled: 0,
    last_scale: null,
    created_at: 0,
    updated_at: 0,
    ...a,
  };
  let amount = opts.amount;
  const scaled: number[] = [];
  const store = {
    enabled: () => (row.disabled ? [] : [row]),
    setLastScale: (_id: string, at: number) => void (row.last_scale = at),
  } as unknown as AutoscalersStore;
  const engine = createAutoscalerEngine({
    store,
    traffic: { window: () => ({ n: opts.requests ?? 0 }), windowDurations: () => [] },
    formation: () => [{ type: 'web', amount }],
    findApp: () => ({ id: 'app1', name: 'app' }) as AppRow,
    scale: (_app, _type, n) => {
      if (opts.busy) throw new Error('busy');
      scaled.push(n);
      amount = n;
    },
    logger: createLogger('silent'),
    upCooldownMs: opts.up ?? 0,
    downCooldownMs: opts.down ?? 0,
    rounds: 2,
  });
  const cpu = (value: number): SampleRow[] =>
    Array.from({ length: amount }, (_, i) => ({
      appId: 'app1',
      type: 'web',
      index: i + 1,
      time: 0,
      cpu: value,
      memory: 0,
      memoryLimit: 1,
      swap: 0,
      swapLimit: 1,
    }));
  return {
    engine,
    scaled,
    cpu,
    row,
    get amount() {
      return amount;
    },
  };
}

describe('autoscaler engine', () => {
  it('scales out one step after two rounds above the target, never above max', () => {
    const t = setup({}, { amount: 2 });
    t.engine.evaluate(t.cpu(0.9), 1000);
    expect(t.scaled).toEqual([]); // one reading is not enough
    t.engine.evaluate(t.cpu(0.9), 2000);
    expect(t.scaled).toEqual([3]);
    t.engine.evaluate(t.cpu(0.9), 3000);
    t.engine.evaluate(t.cpu(0.9), 4000);
    t.engine.evaluate(t.cpu(0.9), 5000);
    t.engine.evaluate(t.cpu(0.9), 6000);
    expect(t.scaled).toEqual([3, 4]);
    expect(t.row.last_scale).toBe(4000);
  });

  it('scales in when one container fewer would stay under the target, never under min', () => {
    const t = setup({}, { amount: 4 });
    for (let i = 1; i <= 8; i++) t.engine.evaluate(t.cpu(0.05), i * 1000);
    expect(t.scaled).toEqual([3, 2]);
    // 0.3 on 3 containers would be 0.45 on 2: under 0.5 → in; 0.4 on 3 → 0.6 on 2: stays.
    const u = setup({}, { amount: 3 });
    u.engine.evaluate(u.cpu(0.4), 1000);
    u.engine.evaluate(u.cpu(0.4), 2000);
    expect(u.scaled).toEqual([]);
  });

  it('honours the cool-downs', () => {
    const t = setup({ last_scale: 0 }, { amount: 2, up: 60_000, down: 180_000 });
    t.engine.evaluate(t.cpu(0.9), 30_000);
    t.engine.evaluate(t.cpu(0.9), 59_000);
    expect(t.scaled).toEqual([]);
    t.engine.evaluate(t.cpu(0.9), 61_000);
    expect(t.scaled).toEqual([3]);
    t.engine.evaluate(t.cpu(0.01), 62_000);
    t.engine.evaluate(t.cpu(0.01), 200_000);
    expect(t.scaled).toEqual([3]);
    t.engine.evaluate(t.cpu(0.01), 242_000);
    expect(t.scaled).toEqual([3, 2]);
  });

  it('brings a formation outside [min, max] back at once; rpm_per_container adds what the traffic needs', () => {
    const t = setup({}, { amount: 1 });
    t.engine.evaluate([], 1000);
    expect(t.scaled).toEqual([2]);
    const r = setup({ metric: 'rpm_per_container', target: 10, max_containers: 8 }, { amount: 2, requests: 70 });
    r.engine.evaluate([], 1000);
    r.engine.evaluate([], 2000);
    expect(r.scaled).toEqual([7]);
  });

  it('a busy app is retried at the next round; a disabled autoscaler does nothing', () => {
    const t = setup({}, { amount: 2, busy: true });
    t.engine.evaluate(t.cpu(0.9), 1000);
    t.engine.evaluate(t.cpu(0.9), 2000);
    expect(t.scaled).toEqual([]);
    expect(t.row.last_scale).toBeNull();
    const d = setup({ disabled: 1 }, { amount: 1 });
    d.engine.evaluate([], 1000);
    expect(d.scaled).toEqual([]);
  });
});
