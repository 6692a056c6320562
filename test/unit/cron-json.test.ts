import { describe, expect, it } from 'vitest';
import { intervalOf, parseCronJson } from '../../src/modules/cron/cron-json.ts';

const RULES = { maxJobs: 5, minIntervalMs: 10 * 60_000, secondsField: false, sizes: ['S', 'M', 'L', 'XL', '2XL'] };
const parse = (doc: unknown, rules = RULES) =>
  parseCronJson(typeof doc === 'string' ? doc : JSON.stringify(doc), rules);

describe('cron.json (Scalingo Scheduler format)', () => {
  it('splits the expression from the command; size optional', () => {
    expect(
      parse({
        jobs: [
          { command: '0 5 * * * rake import:orders:status', size: '2XL' },
          { command: '*/10  * * * *   echo  hi' },
          { command: '@daily backup.sh' },
        ],
      }),
    ).toEqual([
      {
        command: '0 5 * * * rake import:orders:status',
        expression: '0 5 * * *',
        run: 'rake import:orders:status',
        size: '2XL',
      },
      { command: '*/10  * * * *   echo  hi', expression: '*/10 * * * *', run: 'echo hi', size: null },
      { command: '@daily backup.sh', expression: '@daily', run: 'backup.sh', size: null },
    ]);
    expect(parse({ jobs: [] })).toEqual([]);
  });

  it('fails the way a deployment fails: not JSON, no jobs array, too many jobs, bad expression, no command, bad size, too frequent', () => {
    expect(() => parse('{"jobs": [')).toThrow(/not valid JSON/);
    expect(() => parse({ tasks: [] })).toThrow(/"jobs" array/);
    expect(() => parse(null)).toThrow(/"jobs" array/);
    expect(() => parse({ jobs: Array.from({ length: 6 }, () => ({ command: '0 * * * * x' })) })).toThrow(/at most 5/);
    expect(() => parse({ jobs: [{ command: '61 * * * * x' }] })).toThrow(/not a valid cron expression/);
    expect(() => parse({ jobs: [{ command: '0 * * * *' }] })).toThrow(/followed by a command/);
    expect(() => parse({ jobs: [{ command: 42 }] })).toThrow(/"command" must be a string/);
    expect(() => parse({ jobs: [{ command: '0 * * * * x', size: 'XXL' }] })).toThrow(/"size" must be one of/);
    expect(() => parse({ jobs: [{ command: '*/5 * * * * x' }] })).toThrow(/more often than every 10 minutes/);
    expect(() => parse('x'.repeat(70_000))).toThrow(/larger than 64 KB/);
  });

  it('with the seconds knob, reads 6-field expressions (tests and demos)', () => {
    const rules = { ...RULES, minIntervalMs: 0, secondsField: true };
    expect(parse({ jobs: [{ command: '*/2 * * * * * echo hi' }] }, rules)[0]).toMatchObject({
      expression: '*/2 * * * * *',
      run: 'echo hi',
    });
    expect(intervalOf('*/2 * * * * *')).toBe(2000);
    expect(intervalOf('*/10 * * * *')).toBe(600_000);
  });
});
