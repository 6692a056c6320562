// Every drain transport, by the name stored in log_drains.transport. Adding one: a file in transports/
// exporting a defineTransport(…), its import and one entry here, then its test and its fidelity entry
// (CONTRIBUTING.md "Add a drain transport").
import { type DrainTransport, type ParsedTarget } from './drain-transport.ts';
import { type DrainRow } from './drains.store.ts';
import { fileTransport } from './transports/file.ts';
import { tcpTransport, tlsTransport } from './transports/stream.ts';
import { udpTransport } from './transports/udp.ts';

export const DRAIN_TRANSPORTS = {
  tcp: tcpTransport,
  tls: tlsTransport,
  udp: udpTransport,
  file: fileTransport,
} satisfies Record<string, DrainTransport>;

export type Transport = keyof typeof DRAIN_TRANSPORTS;

/** A network target without a scheme or a port that names a transport. */
export const DEFAULT_TRANSPORT: Transport = 'tcp';

/** Where lines of a drain that has no network target go: types without a syslog endpoint, the `file` mode. */
export const LOCAL_TRANSPORT: Transport = 'file';

/** The transport a target url's scheme names, if any (case-insensitive). */
export function transportOfScheme(scheme: string): Transport | undefined {
  const s = scheme.toLowerCase();
  return transportNames().find((t) => DRAIN_TRANSPORTS[t].schemes.includes(s));
}

/** The transport a port names when the target has no scheme (6514 → TLS). */
export function transportOfPort(port: string): Transport | undefined {
  return transportNames().find((t) => DRAIN_TRANSPORTS[t].ports?.includes(port));
}

/** A stored row's transport; a name this code never writes falls back to a file, as it always did. */
export function drainTransport(name: string): DrainTransport {
  return isTransport(name) ? DRAIN_TRANSPORTS[name] : DRAIN_TRANSPORTS[LOCAL_TRANSPORT];
}

/** A stored row's target, as its transport receives it; `file`: the drain's file under the data dir. */
export function parsedTarget(row: DrainRow, transport: DrainTransport, file: string): ParsedTarget {
  // normaliseDrain stores a host for every network transport: a row without one was not written by this code.
  if (transport.reach === 'network' && !row.host)
    throw new Error(`log drain ${row.id}: a ${row.transport} drain without a host`);
  return { host: row.host ?? '', port: Number(row.port ?? 0), file };
}

function isTransport(name: string): name is Transport {
  return Object.hasOwn(DRAIN_TRANSPORTS, name);
}

function transportNames(): Transport[] {
  return Object.keys(DRAIN_TRANSPORTS).filter(isTransport);
}
