import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, waitForDeployment, waitForStatus } from '../support/apps.ts';
import { dockerPs, eventually, removeInstance } from '../support/docker-cli.ts';
import { logsUrl, readLogs } from '../support/logs.ts';

// cron.json jobs run on schedule as detached one-offs: seen in `docker ps -a` while they run, their output
// in the app's logs. The seconds knob gives a 3-second schedule (the platform's floor is 10 minutes).
describe('cron tasks (real Docker)', () => {
  let h: Harness;
  const dir = copyFixture('busybox-web');
  writeFileSync(
    join(dir, 'cron.json'),
    JSON.stringify({ jobs: [{ command: '*/3 * * * * * echo cron-says-hi from $CONTAINER; sleep 2', size: 'S' }] }),
  );
  const oneOffs = () =>
    dockerPs([`${LABELS.instance}=${h.emu.instanceId}`, `${LABELS.appName}=cron-app`, `${LABELS.type}=one-off`], true);

  beforeAll(async () => {
    h = await startEmulator({
      intervals: FAST,
      cron: { secondsField: true, minIntervalMinutes: 0, syncMs: 500 },
      apps: [{ name: 'cron-app', dir }],
    });
    await waitForStatus(h, 'cron-app', 'running');
  });
  afterAll(async () => {
    if (h) {
      await h.stop();
      removeInstance(h.emu.instanceId);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the jobs of the deployed cron.json (go-scalingo CronTasks)', async () => {
    const res = await h.call('GET', '/v1/apps/cron-app/cron_tasks');
    expect(res.status).toBe(200);
    expect(res.body.jobs).toHaveLength(1);
    expect(res.body.jobs[0]).toMatchObject({
      command: '*/3 * * * * * echo cron-says-hi from $CONTAINER; sleep 2',
      size: 'S',
      next_execution_date: expect.any(String),
    });
    expect(res.body.jobs[0]).toHaveProperty('last_execution_date');
    expect(Date.parse(res.body.jobs[0].next_execution_date)).toBeGreaterThan(Date.now() - 1000);
  });

  it('runs each job as a detached one-off: in docker ps -a while it runs, its output in the app logs', async () => {
    const seen = await eventually(() => oneOffs()[0], {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'a scheduled one-off in docker ps -a',
    });
    expect(seen.name).toContain('cron-app');
    const url = await logsUrl(h, 'cron-app');
    const line = await eventually(
      async () => (await readLogs(url, { n: 500 })).lines.find((l) => l.includes('cron-says-hi from one-off-')),
      { timeoutMs: 30_000, what: 'the job output in the app logs' },
    );
    expect(line).toMatch(/\[one-off-\d+\] cron-says-hi from one-off-\d+$/);
    const task = (await h.call('GET', '/v1/apps/cron-app/cron_tasks')).body.jobs[0];
    expect(task.last_execution_date).not.toBeNull();
    const runs = (await h.call('GET', '/v1/apps/cron-app/events?per_page=50')).body.events.filter(
      (e: { type: string }) => e.type === 'run',
    );
    expect(runs[0]).toMatchObject({
      user: { username: 'scalingo-platform' },
      type_data: { command: 'echo cron-says-hi from $CONTAINER; sleep 2', detached: true },
    });
  });

  it('a cron.json breaking the rules fails the deployment; removing it stops the schedule', async () => {
    writeFileSync(join(dir, 'cron.json'), JSON.stringify({ jobs: [{ command: '99 * * * * * echo nope' }] }));
    const failed = await waitForDeployment(h, 'cron-app', (d) => d.status === 'build-error');
    const out = await h.call('GET', `/v1/apps/cron-app/deployments/${failed.id}/output`);
    expect(out.text).toMatch(/cron\.json job 1: .* is not a valid cron expression/);
    // The last successful deployment's jobs still run.
    expect((await h.call('GET', '/v1/apps/cron-app/cron_tasks')).body.jobs).toHaveLength(1);
    rmSync(join(dir, 'cron.json'));
    await waitForDeployment(h, 'cron-app', (d) => d.status === 'success' && d.id !== failed.id);
    await waitForStatus(h, 'cron-app', 'running');
    const none = await h.call('GET', '/v1/apps/cron-app/cron_tasks');
    expect(none.status).toBe(404); // the CLI prints an empty table on 404
    await eventually(
      async () => {
        const before = oneOffs().length;
        await new Promise((r) => setTimeout(r, 4000));
        return before === 0 && oneOffs().length === 0;
      },
      { timeoutMs: 30_000, what: 'no more scheduled one-offs' },
    );
  });
});
