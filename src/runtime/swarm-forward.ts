// Loopback doors to the ports tasks publish on other nodes. A task's host-mode port is published on the
// node that runs it (the routing mesh needs IPVS, which not every kernel has); the router, readiness and
// db-tunnels reach containers at publishHost:hostPort only. For a task on another node, the swarm runtime
// opens a listener on the loopback address and pipes each connection to <node address>:<port>, so the
// rest of the emulator keeps reaching every container the same way.
import { connect, createServer, type Server, type Socket } from 'node:net';

export function createNodeForwarder(listenHost: string) {
  const doors = new Map<string, Promise<{ server: Server; port: number }>>();
  const sockets = new Set<Socket>();

  function open(addr: string, port: number): Promise<{ server: Server; port: number }> {
    return new Promise((resolve, reject) => {
      const server = createServer((client) => {
        const upstream = connect({ host: addr, port });
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => (client.destroy(), upstream.destroy()));
          s.on('close', () => (sockets.delete(s), client.destroy(), upstream.destroy()));
        }
        client.pipe(upstream);
        upstream.pipe(client);
      });
      server.on('error', reject);
      server.listen(0, listenHost, () => {
        const a = server.address();
        resolve({ server, port: typeof a === 'object' && a ? a.port : 0 });
      });
    });
  }

  return {
    /** The loopback port that reaches `addr:port` (one listener per target, opened once). */
    async portFor(addr: string, port: number): Promise<number> {
      const key = `${addr}:${port}`;
      let door = doors.get(key);
      if (!door) {
        door = open(addr, port);
        doors.set(key, door);
        door.catch(() => doors.delete(key));
      }
      return (await door).port;
    },
    /** Closes the doors to targets no longer in use. */
    async keepOnly(targets: Set<string>): Promise<void> {
      for (const [key, door] of doors) {
        if (targets.has(key)) continue;
        doors.delete(key);
        (await door.catch(() => null))?.server.close();
      }
    },
    async close(): Promise<void> {
      for (const s of sockets) s.destroy();
      await this.keepOnly(new Set());
    },
  };
}
