// Where this process reaches the port a container listens on (its ContainerSpec.publishPort): the router, readiness,
// db-tunnels, addon consoles and TCP gateways all go through addressOf, so the two ways of reaching containers are one
// function here.
//   - published (the default): the port is published on the engine's `publishHost` (127.0.0.1) and reached there.
//   - network (docker.network): the emulator runs in a container attached to a user-defined network; each container
//     with a port joins it under an alias made from its engine id and is reached at <alias>:<its own port>. Nothing is
//     published on the host then (docs/fidelity.md "The emulator in a container").

/** A host (an IP address or a name the emulator's resolver knows) and a TCP port. */
export interface Address {
  host: string;
  port: number;
}

/**
 * The label carrying, on the emulator's network, the port the emulator reaches a container at (its publishPort): the
 * image may expose other ports (a Dockerfile's EXPOSE), so the inspect cannot tell it from ExposedPorts.
 */
export const REACH_PORT_LABEL = 'io.scalingo-emulator.reach-port';

export type Reach = { kind: 'published'; publishHost: string } | { kind: 'network'; network: string };

/** The reach of a runtime's options: the network when one is named, else the published ports on publishHost. */
export function reachOf(o: { publishHost: string; network?: string }): Reach {
  return o.network ? { kind: 'network', network: o.network } : { kind: 'published', publishHost: o.publishHost };
}

/**
 * The alias of a container on the emulator's network: its short engine id behind a prefix, so the name is never all
 * digits (a resolver would read `0123456789` as an IPv4 number) and stays under DNS's 63 characters.
 */
export function networkAlias(engineId: string): string {
  return `emu-${engineId.slice(0, 12)}`;
}

/**
 * Where the emulator reaches a container, from its engine id and `port`: the host port published on publishHost, or
 * on the network the container's own port (what ContainerInfo.address.port gives, and the containers table keeps).
 */
export function addressOf(reach: Reach, c: { engineId: string; port: number }): Address {
  return reach.kind === 'network'
    ? { host: networkAlias(c.engineId), port: c.port }
    : { host: reach.publishHost, port: c.port };
}
