import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DEFAULT_STACK_IMAGE } from '../src/config/schema.ts';
import { createDockerRuntime } from '../src/runtime/docker-runtime.ts';
import { type ContainerInfo, type ContainerRuntime, LABELS } from '../src/runtime/runtime.ts';
import { createSwarmRuntime } from '../src/runtime/swarm-runtime.ts';
import { startSwarm } from '../test/support/swarm-cluster.ts';
import { ms, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

// Issue 26: the swarm runtime's cost as containers and nodes grow, against the Docker runtime on one engine.
// Measured at the runtime (src/runtime), the layer the swarm changes: what the API adds on top is the same
// for both (bench/scale.ts measures that part). Sizes: BENCH_SWARM_CONTAINERS (default 200; 20 with --quick),
// and a quarter of it, so that growth with the number of containers shows.
const MiB = 1024 * 1024;
const CONCURRENCY = 8;
const docker = (...args: string[]) =>
  execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Runs `fn` over `items`, `CONCURRENCY` at a time; returns the wall time in ms. */
async function timed<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  const queue = [...items];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
  return performance.now() - t0;
}

interface Figures {
  target: string;
  containers: number;
  scaleMs: number;
  psMs: number;
  statsMs: number;
  logsMs: number;
  removeMs: number;
  onNode2: string;
}

async function measure(
  target: string,
  rt: ContainerRuntime,
  n: number,
  node2?: { id: string; socket: string },
): Promise<Figures> {
  const node2Id = node2?.id;
  const node2Socket = node2?.socket;
  const instance = `bench-swarm-${randomBytes(4).toString('hex')}`;
  const labels = { [LABELS.instance]: instance, [LABELS.appName]: 'bench-swarm' };
  const started: ContainerInfo[] = [];
  try {
    const specs = Array.from({ length: n }, (_, i) => ({
      name: `${instance}-web-${i + 1}`,
      image: DEFAULT_STACK_IMAGE,
      cmd: ['sh', '-c', `echo started web-${i + 1}; mkdir -p /tmp/www && exec httpd -f -p 5000 -h /tmp/www`],
      env: {},
      labels: { ...labels, [LABELS.type]: 'web', [LABELS.index]: String(i + 1) },
      memoryBytes: 32 * MiB,
      publishPort: 5000,
    }));
    const scaleMs = await timed(specs, async (spec) => started.push(await rt.run(spec)));
    const psRuns: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const listed = await rt.list(labels);
      psRuns.push(performance.now() - t0);
      if (listed.filter((c) => c.state === 'running').length !== n)
        throw new Error(`${target}: ps listed ${listed.length} containers, ${n} expected running`);
    }
    const statsMs = await timed(started, async (c) => {
      if (!(await rt.stats(c.engineId))) throw new Error(`${target}: no stats for ${c.name}`);
    });
    const logsMs = await timed(started, async (c) => {
      let seen = false;
      for await (const line of await rt.logs(c.engineId, { follow: false }))
        seen ||= line.text.startsWith('started web-');
      if (!seen) throw new Error(`${target}: the start line of ${c.name} is missing from its logs`);
    });
    let onNode2 = '–';
    if (node2Id) {
      const tasks = docker('node', 'ps', '-q', '--filter', 'desired-state=running', node2Id)
        .split('\n')
        .filter(Boolean).length;
      onNode2 = String(tasks);
    }
    // Removed means gone from the engines (Swarm removes a service's container after the call returns).
    const t0 = performance.now();
    await timed(started.splice(0), (c) => rt.remove(c.engineId));
    const engines = [[] as string[], ...(node2Socket ? [['-H', `unix://${node2Socket}`]] : [])];
    while (engines.some((h) => docker(...h, 'ps', '-aq', '--filter', `label=${LABELS.instance}=${instance}`) !== ''))
      await sleep(100);
    const removeMs = performance.now() - t0;
    return {
      target,
      containers: n,
      scaleMs,
      psMs: psRuns.sort((a, b) => a - b)[1],
      statsMs,
      logsMs,
      removeMs,
      onNode2,
    };
  } finally {
    await Promise.all(started.map((c) => rt.remove(c.engineId).catch(() => undefined)));
  }
}

export const section: Section = {
  name: 'swarm',
  description: 'containers over a two-node swarm vs one engine: scale, ps, stats, logs, at two sizes (issue 26)',
  slow: true,
  async run(ctx: BenchContext): Promise<Result> {
    const n = Number(process.env.BENCH_SWARM_CONTAINERS ?? (ctx.quick ? 20 : 200));
    const sizes = [Math.max(1, Math.round(n / 4)), n];
    const rows: Figures[] = [];
    const local = createDockerRuntime({ env: {} });
    for (const size of sizes) {
      ctx.log(`swarm bench: one engine, ${size} containers`);
      rows.push(await measure('one engine (Docker runtime)', local, size));
    }
    await local.close();
    const cluster = await startSwarm();
    try {
      const one = createSwarmRuntime({ env: {} });
      for (const size of sizes) {
        ctx.log(`swarm bench: swarm of 1 node, ${size} containers`);
        rows.push(await measure('swarm, 1 node', one, size));
      }
      await one.close();
      await cluster.addNode();
      const two = createSwarmRuntime({ env: {} });
      for (const size of sizes) {
        ctx.log(`swarm bench: swarm of 2 nodes, ${size} containers`);
        rows.push(await measure('swarm, 2 nodes', two, size, cluster.node2));
      }
      await two.close();
    } finally {
      await cluster.leave();
    }
    const per = (total: number, count: number) => ms(total / count);
    return {
      title: `Swarm runtime: ${n} containers over one and two nodes vs one engine`,
      method:
        `The runtime layer (src/runtime) driven directly, ${CONCURRENCY} calls at a time: \`run\` of N busybox web containers (httpd, 32 MiB, port published), ` +
        'then `list` by labels (ps; median of 3), one `stats` sample of each, the logs of each (its start line checked), and `remove` of all until no container of them is left on any engine. ' +
        "One engine: the Docker runtime on this machine's dockerd. Swarm: the same engine made a swarm manager, then a second dockerd in a network namespace " +
        'joined to it (test/support/swarm-cluster.ts); the swarm runtime runs each container as a service of one replica and waits for its task to run. ' +
        'Node 2 reaches no registry: the image is copied to it (docker save | docker load) by the first `run`, inside the first scale figure of 2 nodes.',
      tables: [
        {
          headers: [
            'target',
            'containers',
            'scale (all running)',
            'per container',
            'ps',
            'stats of all',
            'per container',
            'logs of all',
            'remove all',
            'tasks on node 2',
          ],
          rows: rows.map((r) => [
            r.target,
            String(r.containers),
            ms(r.scaleMs),
            per(r.scaleMs, r.containers),
            ms(r.psMs),
            ms(r.statsMs),
            per(r.statsMs, r.containers),
            ms(r.logsMs),
            ms(r.removeMs),
            r.onNode2,
          ]),
        },
      ],
      targets: [],
    };
  },
};
