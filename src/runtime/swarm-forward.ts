// One loopback door per published service (on a port of DOOR_PORTS, swarm-ports.ts). A task's host-mode port is published on the node that runs
// it (the routing mesh needs IPVS, which not every kernel has), and it changes when Swarm moves the task
// to another node. The router, readiness and db-tunnels reach containers at publishHost:hostPort only,
// and keep the hostPort they were given: so the swarm runtime gives each service a listener on the
// loopback address, stable for its life, that pipes each connection to where the task runs now
// (<node address>:<port>, or 127.0.0.1:<port> on the manager).
import { connect, createServer, type Server, type Socket } from 'node:net';
import { DOOR_PORTS, pickPort } from './swarm-ports.ts';

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
    })().catch(() => client.destroy());
  }

  /** A listener on a port of DOOR_PORTS (swarm-ports.ts: never one Docker may give a container). */
  async function open(resolve: () => Promise<DoorTarget | null>): Promise<Door> {
    for (let attempt = 0; ; attempt++) {
      const port = await pickPort(DOOR_PORTS, inUse(), listenHost);
      try {
        return await new Promise<Door>((ok, fail) => {
          const door: Door = { server: createServer((client) => pipe(client, door, resolve)), port, target: null };
          door.server.once('error', fail);
          door.server.listen({ port, host: listenHost, exclusive: true }, () => {
            door.server.on('error', () => undefined);
            ok(door);
          });
        });
      } catch (err) {
        // Taken between the check and the listen: another port.
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw err;
      }
    }
  }

  const ports = new Set<number>();
  const inUse = () => ports;

  return {
    /** The loopback port of the service's door (opened on first use); `resolve` says where its task runs now. */
    async portOf(serviceId: string, resolve: () => Promise<DoorTarget | null>): Promise<number> {
      let door = doors.get(serviceId);
      if (!door) {
        door = open(resolve);
        doors.set(serviceId, door);
        door.then(
          (d) => ports.add(d.port),
          () => doors.delete(serviceId),
        );
      }
      return (await door).port;
    },
    /** The service's task changed (started, moved): the next connection asks where it runs. */
    forget(serviceId: string): void {
      void doors.get(serviceId)?.then(
        (d) => void (d.target = null),
        () => undefined,
      );
    },
    async close(serviceId: string): Promise<void> {
      const door = doors.get(serviceId);
      doors.delete(serviceId);
      const d = await door?.catch(() => null);
      d?.server.close();
      if (d) ports.delete(d.port);
    },
    async closeAll(): Promise<void> {
      for (const s of sockets) s.destroy();
      await Promise.all([...doors.keys()].map((id) => this.close(id)));
    },
  };
}
