// A real Docker Swarm on this machine, made and unmade by a test: the machine's engine becomes the manager
// (`docker swarm init`, advertising an address on a veth pair the test creates), and a second node is a
// second dockerd started INSIDE a network namespace the test creates, with its own data root, exec root,
// pid file, containerd namespace and unix socket (reachable from here: that is how the emulator asks node 2
// for logs and stats). Node 2 joins over the veth; its engine address goes on its node label
// `io.scalingo-emulator.engine`. leave() undoes all of it: services and networks go with `swarm leave`.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docker } from './docker-cli.ts';
import { type NetnsDockerd, startNetnsDockerd } from './netns-dockerd.ts';

const run = (cmd: string, ...args: string[]) =>
  execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const quiet = (cmd: string, ...args: string[]) => {
  try {
    run(cmd, ...args);
  } catch {
    // undoing what may not have been done
  }
};

export interface SwarmCluster {
  managerAddr: string;
  managerNodeId: string;
  node2?: { id: string; socket: string; addr: string; cli(...args: string[]): string };
  addNode(): Promise<void>;
  /** Node 2's daemon stops (SIGTERM) and stays down: to the swarm, a node lost. */
  loseNode2(): Promise<void>;
  leave(): Promise<void>;
  /** What leave() should have removed and is still there (empty when all is clean). */
  leftovers(): string[];
}

export async function startSwarm(): Promise<SwarmCluster> {
  const state = docker('info', '--format', '{{.Swarm.LocalNodeState}}');
  if (state !== 'inactive')
    throw new Error(
      `the engine is already in a swarm (${state}): this test makes its own and leaves it; run \`docker swarm leave --force\` first`,
    );
  const gwbridgeBefore = docker('network', 'ls', '-q', '--filter', 'name=^docker_gwbridge$') !== '';
  const tag = randomBytes(3).toString('hex');
  const ns = `emu-swarm-${tag}`;
  const hostIf = `emsw${tag}h`;
  const nsIf = `emsw${tag}n`;
  const octet = 100 + (randomBytes(1)[0] % 100);
  const managerAddr = `10.231.${octet}.1`;
  const node2Addr = `10.231.${octet}.2`;
  const dir = mkdtempSync(join(tmpdir(), 'emu-swarm-'));
  let daemon: NetnsDockerd | null = null;
  let daemonPid = 0;
  run('ip', 'netns', 'add', ns);
  run('ip', 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf, 'netns', ns);
  run('ip', 'addr', 'add', `${managerAddr}/24`, 'dev', hostIf);
  run('ip', 'link', 'set', hostIf, 'up');
  run('ip', '-n', ns, 'addr', 'add', `${node2Addr}/24`, 'dev', nsIf);
  run('ip', '-n', ns, 'link', 'set', nsIf, 'up');
  run('ip', '-n', ns, 'link', 'set', 'lo', 'up');
  docker('swarm', 'init', '--advertise-addr', managerAddr, '--listen-addr', `${managerAddr}:2377`);
  const managerNodeId = docker('info', '--format', '{{.Swarm.NodeID}}');

  const cluster: SwarmCluster = {
    managerAddr,
    managerNodeId,
    async addNode() {
      daemon = await startNetnsDockerd({ ns, dir, tag, bip: `10.232.${octet}.1/24` });
      const { socket, cli } = daemon;
      cli(
        'swarm',
        'join',
        '--token',
        docker('swarm', 'join-token', '-q', 'worker'),
        '--advertise-addr',
        node2Addr,
        '--listen-addr',
        `${node2Addr}:2377`,
        `${managerAddr}:2377`,
      );
      const id = cli('info', '--format', '{{.Swarm.NodeID}}');
      docker('node', 'update', '--label-add', `io.scalingo-emulator.engine=unix://${socket}`, id);
      cluster.node2 = { id, socket, addr: node2Addr, cli };
    },
    async loseNode2() {
      daemonPid = daemon?.pid() ?? 0;
      if (!daemon || !daemonPid) throw new Error('node 2 has no daemon to stop');
      if (!(await daemon.stop(60_000))) throw new Error(`node 2's dockerd (${daemonPid}) did not stop within 60 s`);
    },
    async leave() {
      if (cluster.node2) quiet('docker', '-H', `unix://${cluster.node2.socket}`, 'swarm', 'leave', '--force');
      quiet('docker', 'swarm', 'leave', '--force');
      if (daemon) {
        daemonPid = daemon.pid();
        await daemon.stop();
      }
      quiet('ip', 'link', 'del', hostIf);
      quiet('ip', 'netns', 'del', ns);
      // Swarm made docker_gwbridge: removed once its endpoints are (they go asynchronously after the leave).
      for (
        let i = 0;
        !gwbridgeBefore && i < 50 && docker('network', 'ls', '-q', '--filter', 'name=^docker_gwbridge$');
        i++
      ) {
        quiet('docker', 'network', 'rm', 'docker_gwbridge');
        await new Promise((r) => setTimeout(r, 200));
      }
      rmSync(dir, { recursive: true, force: true });
    },
    leftovers() {
      const left: string[] = [];
      if (run('ip', 'netns', 'list').includes(ns)) left.push(`network namespace ${ns}`);
      if (run('ip', '-br', 'link').includes(hostIf)) left.push(`veth ${hostIf}`);
      if (daemonPid && existsSync(`/proc/${daemonPid}`)) left.push(`dockerd ${daemonPid}`);
      if (existsSync(dir)) left.push(dir);
      if (docker('info', '--format', '{{.Swarm.LocalNodeState}}') !== 'inactive') left.push('the swarm');
      return left;
    },
  };
  return cluster;
}
