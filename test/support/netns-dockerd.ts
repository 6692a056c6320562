// A second dockerd, started INSIDE a network namespace a test made, with its own data root, exec root, pid
// file, containerd namespace and unix socket (reachable from here: the socket is a file). The swarm test's
// second node (swarm-cluster.ts) and the image sources' test engine (test/docker/image-sources.test.ts) are one.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface NetnsDockerd {
  socket: string;
  /** The docker CLI on this engine. */
  cli(...args: string[]): string;
  /** The daemon's pid (0 when it never wrote its pid file). */
  pid(): number;
  /** SIGTERM, then waits for the process to end (at most `ms`); false when it is still there. */
  stop(ms?: number): Promise<boolean>;
}

export interface NetnsDockerdOptions {
  /** The namespace's name (`ip netns add`). */
  ns: string;
  /** A directory of the test's: data, exec root, pid file and socket go in it. */
  dir: string;
  /** Unique per test: the containerd namespaces' suffix. */
  tag: string;
  /** The default bridge's address (`--bip`). */
  bip: string;
  /** Further dockerd flags (`--config-file`…). */
  args?: string[];
}

export async function startNetnsDockerd(o: NetnsDockerdOptions): Promise<NetnsDockerd> {
  const socket = join(o.dir, 'docker.sock');
  const pidFile = join(o.dir, 'dockerd.pid');
  // nsenter enters the network namespace only (`ip netns exec` would remount /sys and hide the cgroups).
  const daemon = spawn(
    'nsenter',
    [
      `--net=/var/run/netns/${o.ns}`,
      'dockerd',
      '--data-root',
      join(o.dir, 'data'),
      '--exec-root',
      join(o.dir, 'exec'),
      '--pidfile',
      pidFile,
      '-H',
      `unix://${socket}`,
      '--bip',
      o.bip,
      '--containerd-namespace',
      `emu-node2-${o.tag}`,
      '--containerd-plugins-namespace',
      `emu-node2-${o.tag}-plugins`,
      ...(o.args ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'ignore'] },
  );
  daemon.on('error', () => undefined);
  const cli = (...args: string[]) =>
    execFileSync('docker', ['-H', `unix://${socket}`, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    }).trim();
  const pid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : (daemon.pid ?? 0));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      cli('version', '--format', '{{.Server.Version}}');
      break;
    } catch {
      if (daemon.exitCode !== null) throw new Error(`the second dockerd exited (code ${daemon.exitCode})`);
      if (Date.now() > deadline) {
        daemon.kill('SIGTERM'); // nsenter execs dockerd: this is the daemon
        throw new Error('the second dockerd did not answer within 60 s');
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  return {
    socket,
    cli,
    pid,
    async stop(ms = 30_000) {
      const p = pid();
      if (!p) return true;
      try {
        process.kill(p, 'SIGTERM');
      } catch {
        return true; // gone already
      }
      const until = Date.now() + ms;
      while (existsSync(`/proc/${p}`) && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
      return !existsSync(`/proc/${p}`);
    },
  };
}
