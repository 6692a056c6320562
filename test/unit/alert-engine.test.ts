import { describe, expect, it } from 'vitest';
import { type AlertEngineDeps, createAlertEngine } from '../../src/modules/alerts/alert-engine.ts';
import { type AlertRow } from '../../src/modules/alerts/alerts.store.ts';
import { type AppRow } from '../../src/modules/apps/apps.store.ts';
import { createLogger } from '../../src/shared/logger.ts';

// When an alert fires, judged on the rounds' own times (a manual clock gives rounds their tick's time).
const MINUTE = 60_000;
const CREATED = 1_800_000_000_000;

function setup() {
  const alert: AlertRow = {
    id: 'al-1',
    app_id: 'app1',
    container_type: 'web',
    metric: 'all',
    threshold: 100,
    disabled: 0,
    send_when_below: 1, // no router traffic: 0 requests a minute is below the limit in every round
    duration_before_trigger: 3 * MINUTE * 1e6,
    remind_every: null,
    metadata: '{}',
    created_at: CREATED,
    updated_at: CREATED,
  };
  const fired: boolean[] = [];
  const deps = {
    alerts: { enabled: () => [alert], notifierIds: () => [] },
    stats: { window: () => ({ n: 0, e: 0 }), windowDurations: () => [] },
    recorder: { flush: () => undefined },
    notifiers: { notifyAlert: () => undefined },
    events: {
      record: (e: { typeData: { activated: boolean } }) => {
        fired.push(e.typeData.activated);
        return e;
      },
    },
    findApp: () => ({ id: 'app1', name: 'app' }) as AppRow,
    logger: createLogger('silent'),
  } as unknown as AlertEngineDeps;
  return { engine: createAlertEngine(deps), fired };
}

describe('alert engine: duration before trigger', () => {
  it('fires once the value stayed beyond the limit for the duration, counted from the first round after creation', () => {
    const { engine, fired } = setup();
    engine.evaluate([], CREATED + MINUTE);
    engine.evaluate([], CREATED + 3 * MINUTE);
    expect(fired).toEqual([]);
    engine.evaluate([], CREATED + 4 * MINUTE);
    expect(fired).toEqual([true]);
  });

  it('a round taken before the alert existed (in flight across an advance) does not start its duration', () => {
    const { engine, fired } = setup();
    engine.evaluate([], CREATED - 24 * 60 * MINUTE);
    engine.evaluate([], CREATED + MINUTE);
    engine.evaluate([], CREATED + 2 * MINUTE);
    expect(fired).toEqual([]);
    expect(engine.isActive('al-1')).toBe(false);
    engine.evaluate([], CREATED + 4 * MINUTE);
    expect(fired).toEqual([true]);
  });
});
