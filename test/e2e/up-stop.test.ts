// The stop that wins (issue 35): `scalingo-emulator up` as a process, on a project with a PostgreSQL
// addon and a Procfile (web, worker, postdeploy), is sent SIGINT or SIGTERM at ten moments of its start,
// one run each on the same data dir: before the app exists, while the emulator and the addon server
// start, during the archive and upload, the build, the postdeploy hook, the containers' start, once
// deployed, and during a redeploy the watcher queued. Each time it exits 0 within 30 s and Docker holds
// no running container of the emulator, nor any finished one-shot or app container (addon servers stay,
// stopped, with their data). Then a last `up` serves the app with the data written before. The same
// for `up --detach`, stopped while it deploys, then `down`.

import { type spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../src/runtime/runtime.ts';
import { routerGet } from '../support/apps.ts';
import { spawnCaptured } from '../support/captured-process.ts';
import { instanceOfDataDir } from '../support/data-dirs.ts';
import { docker, dockerPs, eventually, giveUp, removeInstance } from '../support/docker-cli.ts';
import { emulatorCommand } from '../support/emulator-command.ts';
import { FREE_PORT_FLAGS } from '../support/free-port.ts';

const root = mkdtempSync(join(tmpdir(), 'emu-up-stop-'));
const APP = 'stop-wins-app';
const dir = join(root, APP);
const dataDir = join(root, 'data');
const FREE_PORTS = [...FREE_PORT_FLAGS, '--data-dir', dataDir];
const EXIT_WITHIN_MS = 30_000;
/** From a saved file to the redeploy's first line: the watcher's debounce and settling take under a second. */
const REDEPLOY_WITHIN_MS = 30_000;

/** Every `up` this file started: one a failed assertion left running is killed before its Docker objects go. */
const started = new Set<ReturnType<typeof spawn>>();

function run(args: string[]) {
  const run = spawnCaptured(...emulatorCommand(args), {
    cwd: root,
    env: { ...process.env, EMULATOR_CONFIG: '', NO_COLOR: '1', XDG_STATE_HOME: join(root, 'state') },
  });
  started.add(run.child);
  return run;
}

function writeProject() {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'Procfile'),
    [
      'web: exec httpd -f -p $PORT -h /app',
      'worker: while true; do sleep 1; done',
      // Long enough for a signal to find it running.
      'postdeploy: echo hook-start; sleep 8; echo hook-end',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'index.html'), 'v1\n');
  writeFileSync(join(dir, 'scalingo.json'), JSON.stringify({ addons: ['postgresql:postgresql-sandbox'] }));
}

/** The label value of this data dir's containers (its instance id), once the emulator made its database. */
const instanceId = () => instanceOfDataDir(dataDir);

/** Every container of this data dir's emulator: apps, one-offs (instance label), builds, hooks, addon servers (owner label). */
function emulatorContainers(instance: string) {
  const byLabel = (label: string) =>
    docker(
      'ps',
      '-a',
      '--filter',
      `label=${label}=${instance}`,
      '--format',
      '{{.Names}}\t{{.State}}\t{{.Label "io.scalingo-emulator.addon-id"}}',
    )
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [name, state, addonId] = l.split('\t');
        return { name, state, addon: Boolean(addonId) };
      });
  return [...byLabel(LABELS.instance), ...byLabel(LABELS.owner)];
}

interface Moment {
  what: string;
  signal: 'SIGINT' | 'SIGTERM';
  /** The line of `up`'s output that marks the moment. */
  at: RegExp;
  /** Done as soon as `up` says it is ready (before the moment comes): the change the watcher redeploys. */
  onReady?: () => void;
}

// In the order a start goes through them: each run stops before the next moment, so the next run goes further
// (a deployment cut short is made again by the next `up`, until one succeeds).
const MOMENTS: Moment[] = [
  { what: 'before the app exists', signal: 'SIGINT', at: new RegExp(`^${APP}: `, 'm') },
  { what: 'the emulator and the addon server starting', signal: 'SIGTERM', at: /^Emulator started at /m },
  { what: 'the app made, the addon provisioning', signal: 'SIGINT', at: /^(Created|Resuming) the app /m },
  { what: 'the archive and its upload', signal: 'SIGTERM', at: /^Deploying \(start\)/m },
  { what: 'the source fetched and extracted', signal: 'SIGINT', at: /^build\s+\| -----> Fetching archive/m },
  { what: 'the image build', signal: 'SIGTERM', at: /^build\s+\|\s+Step 1\//m },
  { what: 'the postdeploy hook running', signal: 'SIGINT', at: /^postdeploy\s+\| hook-start/m },
  { what: 'the containers starting', signal: 'SIGTERM', at: /^postdeploy\s+\| hook-end/m },
  // The run before may have ended its deployment: this one then finds the version up to date.
  { what: 'deployed', signal: 'SIGINT', at: /^(Deployed in |The running version is up to date)/m },
  {
    what: 'a redeploy the watcher queued',
    signal: 'SIGTERM',
    at: /^Deploying \(changed: /m,
    onReady: () => writeFileSync(join(dir, 'index.html'), 'v2\n'),
  },
];

/** Waits for a line of the process's output; ends at once, with its output, when it exits first. */
async function waitFor(p: ReturnType<typeof run>, at: RegExp, what: string, onPoll?: () => void): Promise<void> {
  try {
    await eventually(
      () => {
        if (p.child.exitCode !== null) throw giveUp(`up exited (${p.child.exitCode}) before ${what}`);
        onPoll?.();
        return at.test(p.stdout());
      },
      { timeoutMs: 240_000, what },
    );
  } catch (err) {
    p.child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n${p.stdout()}${p.stderr()}`);
  }
}

async function exitWithin(p: ReturnType<typeof run>, what: string): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((ok) => (timer = setTimeout(() => ok('late'), EXIT_WITHIN_MS)));
  const code = await Promise.race([p.exited, late]);
  clearTimeout(timer);
  if (code === 'late') {
    p.child.kill('SIGKILL');
    throw new Error(`${what}: still running ${EXIT_WITHIN_MS / 1000} s after the signal:\n${p.stdout()}${p.stderr()}`);
  }
  return code;
}

function expectNothingLeft(instance: string, what: string): void {
  const left = emulatorContainers(instance);
  // Nothing runs; what is left is only the addon server, stopped, that holds the data.
  expect(
    left.filter((c) => c.state === 'running' || !c.addon),
    what,
  ).toEqual([]);
}

describe('up: a stop that wins at any moment (real Docker)', () => {
  let instance: string | null = null;
  afterAll(async () => {
    for (const child of started)
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((ok) => child.once('exit', ok));
        child.kill('SIGKILL');
        await gone;
      }
    instance ??= instanceId();
    if (instance) removeInstance(instance);
    rmSync(root, { recursive: true, force: true });
  });

  it('SIGINT / SIGTERM at ten moments of the start: exit 0, nothing left running; the next up serves the app with its data', async () => {
    writeProject();
    let wroteData = false;
    for (const m of MOMENTS) {
      const p = run(['up', APP, ...FREE_PORTS]);
      // The change is made the moment the ready line arrives (not at the next poll): `up` watches its folder
      // from that line on, so a save made at once is deployed.
      let readyAt: number | undefined;
      const onReady = m.onReady;
      if (onReady)
        p.child.stdout.on('data', () => {
          if (readyAt === undefined && /Ctrl-C stops the app/.test(p.stdout())) {
            readyAt = Date.now();
            onReady();
          }
        });
      await waitFor(p, m.at, m.what, () => {
        if (readyAt !== undefined && Date.now() - readyAt > REDEPLOY_WITHIN_MS && !m.at.test(p.stdout()))
          throw giveUp(`no redeploy ${REDEPLOY_WITHIN_MS / 1000} s after the change written once up was ready`);
      });
      if (m.what === 'deployed') {
        // Data in the addon, written once deployed: the last `up` finds it.
        instance ??= instanceId();
        const pg = dockerPs([`${LABELS.owner}=${instance}`]).find((c) => /postgresql/.test(c.name));
        expect(pg, 'the PostgreSQL server').toBeDefined();
        docker(
          'exec',
          '-u',
          'postgres',
          pg!.id,
          'psql',
          '-c',
          'CREATE TABLE kept (v text); INSERT INTO kept VALUES ($$before the stops$$)',
        );
        wroteData = true;
      }
      p.child.kill(m.signal);
      expect(await exitWithin(p, m.what), `${m.what}: ${p.stderr()}`).toBe(0);
      expect(p.stdout()).toContain(`${m.signal}: stopping`);
      instance ??= instanceId();
      if (instance) expectNothingLeft(instance, m.what);
    }
    expect(wroteData).toBe(true);

    // The next `up` serves the app (the watcher's change deployed) with the data written before.
    const last = run(['up', APP, ...FREE_PORTS]);
    await waitFor(last, /Ctrl-C stops the app/, 'the last up ready');
    const routerPort = Number(/App\s+http:\/\/[^:]+:(\d+)/.exec(last.stdout())?.[1]);
    let served = '';
    try {
      await eventually(
        async () => {
          served = (await routerGet(routerPort, APP, '/index.html')).body;
          if (served === 'v1\n' && /^The running version is up to date/m.test(last.stdout()))
            throw giveUp('the last up took v1 for up to date: the change is never deployed');
          return served === 'v2\n';
        },
        {
          timeoutMs: 60_000,
          what: 'the app served',
        },
      );
    } catch (err) {
      last.child.kill('SIGKILL');
      throw new Error(
        `${(err as Error).message} (it serves ${JSON.stringify(served)})\n${last.stdout()}${last.stderr()}`,
      );
    }
    const pg = dockerPs([`${LABELS.owner}=${instance}`]).find((c) => /postgresql/.test(c.name));
    expect(docker('exec', '-u', 'postgres', pg!.id, 'psql', '-tAc', 'SELECT v FROM kept').trim()).toBe(
      'before the stops',
    );
    last.child.kill('SIGINT');
    expect(await exitWithin(last, 'the last up')).toBe(0);
    expectNothingLeft(String(instance), 'the last up');
  }, 1_800_000);

  it('up --detach stopped while it deploys exits 0 and leaves no emulator; down then finds nothing running', async () => {
    writeFileSync(join(dir, 'index.html'), 'v3\n');
    const p = run(['up', APP, '--detach', ...FREE_PORTS]);
    await waitFor(p, /^Deploying \(start\)/m, 'the deployment');
    const pid = Number(/Emulator started in the background \(pid (\d+)/.exec(p.stdout())?.[1]);
    expect(pid).toBeGreaterThan(0);
    p.child.kill('SIGINT');
    expect(await exitWithin(p, 'up --detach'), p.stderr()).toBe(0);
    expect(() => process.kill(pid, 0)).toThrow();
    expectNothingLeft(String(instance ?? instanceId()), 'up --detach');
    const d = run(['down', APP]);
    expect(await d.exited, d.stderr()).toBe(0);
    expectNothingLeft(String(instance ?? instanceId()), 'down');
  }, 600_000);
});
