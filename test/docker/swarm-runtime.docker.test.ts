// The swarm runtime (docker.mode "swarm") on a real swarm made by the test on this machine's engine: the
// runtime contract on one node, then a second node (a second dockerd in a network namespace the test
// creates, joined to the swarm) for what only two nodes show. One file, so that one swarm at a time
// exists: the engine can only be in one, and other files' plain containers keep running meanwhile.

import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { createSwarmRuntime, NOT_A_MANAGER } from '../../src/runtime/swarm-runtime.ts';
import { defined } from '../../src/shared/defined.ts';
import { runtimeContract } from '../contract/runtime-contract.ts';
import { type Harness, startEmulator } from '../harness.ts';
import { copyFixture, FAST, routerGet, waitForAddon, waitForOperation, waitForStatus } from '../support/apps.ts';
import { docker, eventually, removeInstance } from '../support/docker-cli.ts';
import { logsUrl, readLogs } from '../support/logs.ts';
import { type SwarmCluster, startSwarm } from '../support/swarm-cluster.ts';
import { connectTerminal, runAttached } from '../support/terminal.ts';

let cluster: SwarmCluster | undefined;
const APP = 'swarm-app';
const MiB = 1024 * 1024;
const LONG = 600_000;

/** Services and plain containers labelled `label`, removed through the engine's CLI. */
function removeServicesByLabel(label: string): void {
  const ids = docker('service', 'ls', '-q', '--filter', `label=${label}`);
  if (ids) docker('service', 'rm', ...ids.split('\n'));
  const plain = docker('ps', '-aq', '--filter', `label=${label}`);
  if (plain) docker('rm', '-f', ...plain.split('\n'));
}

it('before the swarm exists, the runtime says at start that the engine is not a swarm manager', async () => {
  const rt = createSwarmRuntime({ env: {} });
  expect(await rt.probe()).toEqual({ ok: false, error: NOT_A_MANAGER });
  await rt.close();
});

describe('swarm runtime', () => {
  beforeAll(async () => {
    cluster = await startSwarm();
  });
  afterAll(async () => {
    await cluster?.leave();
    // The second daemon, its namespace, its veth and its directories are gone.
    expect(cluster?.leftovers()).toEqual([]);
    // Nothing of the swarm is left on the shared engine.
    expect(docker('info', '--format', '{{.Swarm.LocalNodeState}}')).toBe('inactive');
  });

  it('a one-node swarm is up (this engine is its manager)', () => {
    expect(docker('node', 'ls', '--format', '{{.Self}} {{.ManagerStatus}}')).toBe('true Leader');
  });

  runtimeContract('Swarm (one node: services of one replica, plain containers for terminals)', () => {
    const runtime = createSwarmRuntime({ env: {} });
    return {
      runtime,
      async cleanup(labels) {
        await runtime.close();
        removeServicesByLabel(`${LABELS.instance}=${labels[LABELS.instance]}`);
      },
    };
  });

  it('other plain containers of the engine keep working while it is a swarm manager', () => {
    expect(docker('run', '--rm', DEFAULT_STACK_IMAGE, 'echo', 'plain-run-ok')).toBe('plain-run-ok');
  });

  describe('two nodes: the emulator in docker.mode "swarm"', () => {
    let h: Harness;
    const dir = copyFixture('busybox-web');
    const node2 = () => defined(cluster?.node2, 'node 2');
    /** Where Swarm runs each of the app's containers, by label (web-1…): node id and engine container id. */
    const placement = (type?: string) => {
      const filters = [
        `${LABELS.instance}=${h.emu.instanceId}`,
        `${LABELS.appName}=${APP}`,
        ...(type ? [`${LABELS.type}=${type}`] : []),
      ];
      const ids = docker('service', 'ls', '-q', ...filters.flatMap((f) => ['--filter', `label=${f}`]))
        .split('\n')
        .filter(Boolean);
      return ids.map((id) => {
        const [label] = docker(
          'service',
          'inspect',
          '-f',
          `{{index .Spec.Labels "${LABELS.type}"}}-{{index .Spec.Labels "${LABELS.index}"}}`,
          id,
        ).split('\n');
        const task = docker('service', 'ps', '-q', '--filter', 'desired-state=running', id).split('\n')[0];
        const [node, cid, state] = task
          ? docker(
              'inspect',
              '-f',
              '{{.NodeID}} {{.Status.ContainerStatus.ContainerID}} {{.Status.State}}',
              task,
            ).split(' ')
          : ['', '', 'none'];
        return { service: id, label, node, cid, state };
      });
    };

    /** The app's tasks of `type` (all types when absent), once there are `count` and each satisfies `where`. */
    const tasksWhen = (
      count: number,
      where: (t: ReturnType<typeof placement>[number]) => boolean,
      what: string,
      type?: string,
    ) =>
      eventually(
        () => {
          const p = placement(type);
          return p.length === count && p.every(where) ? p : null;
        },
        { timeoutMs: 120_000, what },
      );
    /** The labels of the app's containers `ps` shows, once `count` of those whose label starts with `prefixes` run. */
    const psRunning = async (prefixes: string[], count: number) => {
      const ps = await eventually(
        async () => {
          const c = (await h.call('GET', `/v1/apps/${APP}/ps`)).body.containers as { label: string; state: string }[];
          const app = c.filter((x) => prefixes.some((p) => x.label.startsWith(p)));
          return app.length === count && app.every((x) => x.state === 'running') ? app : null;
        },
        { timeoutMs: 60_000, what: `ps: ${count} containers running` },
      );
      return ps.map((x) => x.label).sort();
    };
    /** The distinct answers the router gives for the app, once there are `count` of them. */
    const routerAnswers = async (count: number) => {
      const answers = new Set<string>();
      await eventually(
        async () => {
          const r = await routerGet(h.emu.urls.routerPort, APP);
          if (r.status === 200) answers.add(r.body.trim());
          return answers.size === count;
        },
        { timeoutMs: 60_000, what: `the router to reach ${count} web tasks` },
      );
      return [...answers].sort();
    };

    beforeAll(async () => {
      await defined(cluster, 'the swarm').addNode();
      h = await startEmulator({
        docker: { mode: 'swarm', swarm: { oneOffNode: node2().id } },
        intervals: { ...FAST, bootTimeoutMs: 60_000 },
        addons: { servers: true },
        apps: [{ name: APP, dir }],
      });
      await waitForStatus(h, APP, 'running', 180_000);
    }, LONG);
    afterAll(async () => {
      await h?.call('DELETE', `/v1/apps/${APP}?current_name=${APP}`).catch(() => undefined);
      await h?.stop();
      if (h) removeServicesByLabel(`${LABELS.instance}=${h.emu.instanceId}`);
      // The app's deletion removed its overlay network (asynchronously on the manager): what is left goes here.
      if (h)
        await eventually(() => (removeInstance(h.emu.instanceId), true), { what: 'the instance removed from Docker' });
      rmSync(dir, { recursive: true, force: true });
    }, LONG);

    it('node 2 joined: two ready nodes, node 2 reached through its own engine socket', () => {
      expect(docker('node', 'ls', '--format', '{{.Status}} {{.Availability}}').split('\n')).toEqual([
        'Ready Active',
        'Ready Active',
      ]);
      expect(node2().cli('info', '--format', '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}')).toBe(
        'active false',
      );
    });

    it(
      'scale web to 4: tasks on both nodes, each answering through the router',
      async () => {
        const res = await h.call('POST', `/v1/apps/${APP}/scale`, {
          body: { containers: [{ name: 'web', amount: 4 }] },
        });
        expect(res.status).toBe(202);
        expect((await waitForOperation(h, defined(res.headers.get('location'), 'Location'), 180_000)).status).toBe(
          'done',
        );
        const web = await tasksWhen(4, (t) => t.state === 'running', '4 web tasks running', 'web');
        expect(new Set(web.map((t) => t.node))).toEqual(new Set([cluster?.managerNodeId, node2().id]));
        // The app's image was copied to node 2 (no registry: docker save | docker load by the runtime).
        for (const t of web.filter((x) => x.node === node2().id))
          expect(node2().cli('inspect', '-f', '{{.State.Status}}', t.cid)).toBe('running');
        expect(await routerAnswers(4)).toEqual([
          'version 1 from web-1',
          'version 1 from web-2',
          'version 1 from web-3',
          'version 1 from web-4',
        ]);
      },
      LONG,
    );

    it(
      "logs and stats of a task on node 2 come from node 2's engine",
      async () => {
        const res = await h.call('POST', `/v1/apps/${APP}/scale`, {
          body: {
            containers: [
              { name: 'web', amount: 4 },
              { name: 'worker', amount: 2 },
            ],
          },
        });
        expect(res.status).toBe(202);
        await waitForOperation(h, defined(res.headers.get('location'), 'Location'), 180_000);
        const onNode2 = await eventually(
          () => placement('worker').find((t) => t.state === 'running' && t.node === node2().id),
          { timeoutMs: 60_000, what: 'a worker on node 2' },
        );
        // Node 2's engine has the container and its output; the manager's engine does not have it at all.
        expect(node2().cli('logs', onNode2.cid)).toContain(`worker ${onNode2.label} tick`);
        expect(() => docker('inspect', onNode2.cid)).toThrow();
        const url = await logsUrl(h, APP);
        await eventually(
          async () =>
            (await readLogs(url, { n: 200 })).lines.some(
              (l) => l.includes(`[${onNode2.label}]`) && l.includes(`worker ${onNode2.label} tick`),
            ),
          { timeoutMs: 30_000, what: `${onNode2.label}'s ticks in the app's logs` },
        );
        const stats = await eventually(
          async () =>
            (
              (await h.call('GET', `/v1/apps/${APP}/stats`)).body.stats as {
                id: string;
                memory_limit: number;
                memory_usage: number;
              }[]
            ).find((x) => x.id === onNode2.label),
          { what: `stats of ${onNode2.label}` },
        );
        expect(stats.memory_limit).toBe(512 * MiB);
        expect(stats.memory_usage).toBeGreaterThan(0);
        expect(node2().cli('inspect', '-f', '{{.HostConfig.Memory}}', onNode2.cid)).toBe(String(512 * MiB));
      },
      LONG,
    );

    it(
      'a one-off attached on node 2 (docker.swarm.oneOffNode): terminal, resize, exit code',
      async () => {
        const { attachUrl, container } = await runAttached(h, APP, 'sh');
        const t = await connectTerminal(attachUrl);
        expect(t.status).toBe(200);
        const onNode2 = await eventually(
          () => node2().cli('ps', '-q', '--filter', `label=${LABELS.containerId}=${container.id}`),
          { what: 'the one-off running on node 2' },
        );
        expect(docker('ps', '-aq', '--filter', `label=${LABELS.containerId}=${container.id}`)).toBe('');
        t.write('echo $((6*7))\n');
        await t.waitFor(/\r?\n42\r?\n/);
        expect(
          (await fetch(attachUrl, { method: 'PUT', body: JSON.stringify({ width: 120, height: 40 }) })).status,
        ).toBe(200);
        t.write('stty size\n');
        await t.waitFor(/\r?\n40 120\r?\n/);
        t.write('exit 7\n');
        expect(await (await fetch(`${attachUrl}/wait`)).json()).toMatchObject({ exit_code: 7 });
        // It ran on node 2 only: the manager's engine never had it.
        expect(onNode2).toMatch(/^[0-9a-f]{12}$/);
      },
      LONG,
    );

    it(
      'a PostgreSQL addon (pinned to the manager, its volume there) is reachable from an app task on node 2',
      async () => {
        const add = await h.call('POST', `/v1/apps/${APP}/addons`, {
          body: { addon: { addon_provider_id: 'scalingo-postgresql', plan_id: 'postgresql-sandbox' } },
        });
        expect(add.status).toBe(201);
        await waitForAddon(h.call, APP, add.body.addon.id, 600_000);
        const vars = Object.fromEntries(
          (await h.call('GET', `/v1/apps/${APP}/variables`)).body.variables.map(
            (v: { name: string; value: string }) => [v.name, v.value],
          ),
        );
        const url = new URL(vars.DATABASE_URL);
        const pg = docker('service', 'ls', '-q', '--filter', `label=${LABELS.addonId}=${add.body.addon.id}`);
        const task = docker('service', 'ps', '-q', '--filter', 'desired-state=running', pg).split('\n')[0];
        const [node, cid] = docker('inspect', '-f', '{{.NodeID}} {{.Status.ContainerStatus.ContainerID}}', task).split(
          ' ',
        );
        expect(node).toBe(cluster?.managerNodeId);
        expect(
          docker('exec', '-u', 'postgres', cid, 'psql', '-d', url.pathname.slice(1), '-tAc', 'SELECT 40 + 2'),
        ).toBe('42');
        // The app's containers are restarted onto the app's overlay network; one on node 2 reaches the server by its name.
        const probe = await eventually(
          () => {
            const web = placement('web').find((t) => t.state === 'running' && t.node === node2().id);
            if (!web) return null;
            try {
              // PostgreSQL's SSLRequest (8 bytes): a PostgreSQL server answers N (no TLS) or S, then closes on EOF.
              const answer = node2().cli(
                'exec',
                web.cid,
                'sh',
                '-c',
                `printf '\\0\\0\\0\\10\\4\\322\\26\\57' | nc -w 3 ${url.hostname} ${url.port}`,
              );
              return /^[NS]$/.test(answer) ? `reachable from ${web.label}` : null;
            } catch {
              return null;
            }
          },
          { timeoutMs: 120_000, what: `${url.hostname}:${url.port} from a web task on node 2` },
        );
        expect(probe).toMatch(/^reachable from web-\d$/);
      },
      LONG,
    );

    it(
      'node 2 drained: its tasks move to the manager, ps and the router follow',
      async () => {
        const before = placement('web');
        expect(before.some((t) => t.node === node2().id)).toBe(true);
        docker('node', 'update', '--availability', 'drain', node2().id);
        const after = await tasksWhen(
          6,
          (t) => t.state === 'running' && t.node === cluster?.managerNodeId,
          'every task of the app running on the manager',
        );
        expect(after.map((t) => t.label).sort()).toEqual(['web-1', 'web-2', 'web-3', 'web-4', 'worker-1', 'worker-2']);
        // Swarm stops the drained tasks within their grace period: then nothing of the app runs on node 2.
        await eventually(
          () => node2().cli('ps', '-q', '--filter', `label=${LABELS.instance}=${h.emu.instanceId}`) === '',
          { timeoutMs: 60_000, what: 'node 2 empty' },
        );
        expect(await psRunning(['web-', 'worker-'], 6)).toEqual([
          'web-1',
          'web-2',
          'web-3',
          'web-4',
          'worker-1',
          'worker-2',
        ]);
        expect(await routerAnswers(4)).toHaveLength(4);
      },
      LONG,
    );

    it(
      'node 2 lost (its daemon stopped): its tasks start on the manager, ps and the router follow',
      async () => {
        docker('node', 'update', '--availability', 'active', node2().id);
        const res = await h.call('POST', `/v1/apps/${APP}/scale`, {
          body: {
            containers: [
              { name: 'web', amount: 6 },
              { name: 'worker', amount: 2 },
            ],
          },
        });
        expect(res.status).toBe(202);
        expect((await waitForOperation(h, defined(res.headers.get('location'), 'Location'), 180_000)).status).toBe(
          'done',
        );
        // Swarm puts the new ones on the emptier node 2.
        const moved = await eventually(
          () => placement('web').filter((t) => t.state === 'running' && t.node === node2().id),
          { timeoutMs: 60_000, what: 'web tasks on node 2' },
        );
        expect(moved.length).toBeGreaterThan(0);
        await defined(cluster, 'the swarm').loseNode2();
        await eventually(() => docker('node', 'inspect', '-f', '{{.Status.State}}', node2().id) === 'down', {
          timeoutMs: 90_000,
          what: 'the swarm to see node 2 down',
        });
        await tasksWhen(
          6,
          (t) => t.state === 'running' && t.node === cluster?.managerNodeId,
          'the 6 web tasks running on the manager',
          'web',
        );
        expect(await psRunning(['web-'], 6)).toEqual(['web-1', 'web-2', 'web-3', 'web-4', 'web-5', 'web-6']);
        expect(await routerAnswers(6)).toHaveLength(6);
      },
      LONG,
    );
  });
});
