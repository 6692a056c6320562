// cron.json of the deployed code, as the Scalingo Scheduler reads it
// (doc.scalingo.com/platform/app/task-scheduling/scalingo-scheduler): {"jobs":[{"command":"<cron> <command>",
// "size":"2XL"}]}, the cron expression first (UTC), at most 5 jobs, no job more often than every 10 minutes;
// a file breaking these rules fails the deployment.
import { Cron } from 'croner';

export interface CronJob {
  /** As written in cron.json: the expression and the command. */
  command: string;
  expression: string;
  /** What runs in the one-off container. */
  run: string;
  size: string | null;
}

export interface CronRules {
  maxJobs: number;
  /** Smallest interval between two runs of a job; 0: no floor. */
  minIntervalMs: number;
  /** 6-field expressions with seconds first (short test schedules); the platform uses 5 fields. */
  secondsField: boolean;
  sizes: string[];
}

export const CRON_JSON_MAX_BYTES = 64 * 1024;

/** Parses and checks cron.json; throws an Error whose message says what is wrong (shown in the build output). */
export function parseCronJson(text: string, rules: CronRules): CronJob[] {
  if (Buffer.byteLength(text) > CRON_JSON_MAX_BYTES)
    throw new Error(`cron.json is larger than ${CRON_JSON_MAX_BYTES / 1024} KB`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`cron.json is not valid JSON: ${(err as Error).message}`);
  }
  const jobs = (doc as { jobs?: unknown } | null)?.jobs;
  if (!doc || typeof doc !== 'object' || !Array.isArray(jobs))
    throw new Error('cron.json must be an object with a "jobs" array');
  if (jobs.length > rules.maxJobs)
    throw new Error(`cron.json declares ${jobs.length} jobs: at most ${rules.maxJobs} can be scheduled`);
  return jobs.map((j, i) => parseJob(j, i, rules));
}

function parseJob(j: unknown, i: number, rules: CronRules): CronJob {
  const where = `cron.json job ${i + 1}`;
  const o = j as { command?: unknown; size?: unknown } | null;
  if (!o || typeof o !== 'object' || typeof o.command !== 'string')
    throw new Error(`${where}: "command" must be a string: "<cron expression> <command>"`);
  if (o.size !== undefined && o.size !== null && (typeof o.size !== 'string' || !rules.sizes.includes(o.size)))
    throw new Error(`${where}: "size" must be one of ${rules.sizes.join(', ')}`);
  const tokens = o.command.trim().split(/\s+/);
  const n = tokens[0]?.startsWith('@') ? 1 : rules.secondsField ? 6 : 5;
  if (tokens.length <= n)
    throw new Error(
      `${where}: "${o.command}" needs a ${n === 1 ? 'nickname' : `${n}-field`} cron expression followed by a command`,
    );
  const expression = tokens.slice(0, n).join(' ');
  let cron: Cron;
  try {
    cron = new Cron(expression, { paused: true, timezone: 'UTC' });
  } catch (err) {
    throw new Error(`${where}: "${expression}" is not a valid cron expression (${(err as Error).message})`);
  }
  const runs = cron.nextRuns(6, new Date(Date.UTC(2030, 0, 1)));
  for (let k = 1; k < runs.length; k++) {
    if (runs[k].getTime() - runs[k - 1].getTime() < rules.minIntervalMs) {
      throw new Error(
        `${where}: "${expression}" runs more often than every ${Math.round(rules.minIntervalMs / 60_000)} minutes, the smallest interval`,
      );
    }
  }
  cron.stop();
  return {
    command: o.command.trim(),
    expression,
    run: tokens.slice(n).join(' '),
    size: (o.size as string | null | undefined) ?? null,
  };
}

/** Interval between the next two runs (for the run-time cap: a job never runs longer than its interval). */
export function intervalOf(expression: string): number {
  const c = new Cron(expression, { paused: true, timezone: 'UTC' });
  const [a, b] = c.nextRuns(2);
  c.stop();
  return a && b ? b.getTime() - a.getTime() : Infinity;
}
