// One loopback door per published service. A task's host-mode port is published on the node that runs
// it (the routing mesh needs IPVS, which not every kernel has), and it changes when Swarm moves the task
// to another node. The router, readiness and db-tunnels reach containers at publishHost:hostPort only,
// and keep the hostPort they were given: so the swarm runtime gives each service a listener on the
// loopback address, stable for its life, that pipes each connection to where the task runs now
// (<node address>:<port>, or 127.0.0.1:<port> on the manager).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DoorTarget {
  host: string;
  port: number;
}

interface Door {
  server: Server;
  port: number;
  target: DoorTarget | null;
}

export function createServiceDoors(listenHost: string) {
  const doors = new Map<string, Promise<Door>>();
  const sockets = new Set<Socket>();

  function pipe(client: Socket, door: Door, resolve: () => Promise<DoorTarget | null>): void {
    sockets.add(client);
    client.on('error', () => client.destroy());
    client.on('close', () => sockets.delete(client));
    client.pause();
    void (async () => {
      // The target is asked again when unknown (a task moved: its door was told to forget).
      door.target ??= await resolve().catch(() => null);
      const target = door.target;
      if (!target || client.destroyed) return void client.destroy();
      const upstream = connect(target);
      sockets.add(upstream);
      upstream.on('error', () => {
        door.target = null;
        client.destroy();
      });
      upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
      client.on('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    })();
  }

  function open(resolve: () => Promise<DoorTarget | null>): Promise<Door> {
    return new Promise((ok, fail) => {
      const door: Door = { server: createServer((client) => pipe(client, door, resolve)), port: 0, target: null };
      door.server.on('error', fail);
      door.server.listen(0, listenHost, () => {
        const a = door.server.address();
        door.port = typeof a === 'object' && a ? a.port : 0;
        ok(door);
      });
    });
  }

  return {
    /** The loopback port of the service's door (opened on first use); `resolve` says where its task runs now. */
    async portOf(serviceId: string, resolve: () => Promise<DoorTarget | null>): Promise<number> {
      let door = doors.get(serviceId);
      if (!door) {
        door = open(resolve);
        doors.set(serviceId, door);
        door.catch(() => doors.delete(serviceId));
      }
      return (await door).port;
    },
    /** The service's task changed (started, moved): the next connection asks where it runs. */
    forget(serviceId: string): void {
      void doors.get(serviceId)?.then((d) => void (d.target = null), () => undefined);
    },
    async close(serviceId: string): Promise<void> {
      const door = doors.get(serviceId);
      doors.delete(serviceId);
      (await door?.catch(() => null))?.server.close();
    },
    async closeAll(): Promise<void> {
      for (const s of sockets) s.destroy();
      await Promise.all([...doors.keys()].map((id) => this.close(id)));
    },
  };
}
