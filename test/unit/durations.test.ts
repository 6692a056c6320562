import { describe, expect, it } from 'vitest';
import { durationInput, formatGoDuration, parseGoDuration } from '../../src/modules/alerts/durations.ts';

describe('Go durations (alerts: remind_every, duration_before_trigger)', () => {
  it('formats like time.Duration.String()', () => {
    const cases: [number, string][] = [
      [0, '0s'],
      [1, '1ns'],
      [1500, '1.5µs'],
      [300e6, '300ms'],
      [1.5e9, '1.5s'],
      [45e9, '45s'],
      [300e9, '5m0s'],
      [90e9, '1m30s'],
      [3600e9, '1h0m0s'],
      [2 * 3600e9 + 3 * 60e9 + 4.005e9, '2h3m4.005s'],
      [-60e9, '-1m0s'],
    ];
    for (const [ns, text] of cases) expect(formatGoDuration(ns), text).toBe(text);
  });

  it('parses like time.ParseDuration, round-tripping the formatted text', () => {
    expect(parseGoDuration('1h30m')).toBe(5400e9);
    expect(parseGoDuration('1.5s')).toBe(1.5e9);
    expect(parseGoDuration('300ms')).toBe(300e6);
    expect(parseGoDuration('2us')).toBe(2000);
    expect(parseGoDuration('2µs')).toBe(2000);
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('-5m')).toBe(-300e9);
    for (const ns of [1, 1500, 300e6, 45e9, 90e9, 3600e9, 7384.005e9])
      expect(parseGoDuration(formatGoDuration(ns))).toBe(ns);
    for (const bad of ['', '5', 'abc', '5x', '1h 30m', 'h', '.s']) expect(parseGoDuration(bad), bad).toBeNull();
  });

  it('reads request values: ns integers, numeric strings, Go text; "" is unset; the rest is refused', () => {
    expect(durationInput(300000000000)).toBe(300e9);
    expect(durationInput('300000000000')).toBe(300e9);
    expect(durationInput('5m0s')).toBe(300e9);
    expect(durationInput('')).toBeNull();
    for (const bad of [-1, 1.5, '-5m', 'soon', true, {}, []])
      expect(durationInput(bad), JSON.stringify(bad)).toBeUndefined();
  });
});
