// Every drain transport, by the name stored in log_drains.transport. Adding one: a file in
// transports/ exporting a DrainTransport, and one line here (CONTRIBUTING.md "Add a drain transport").
import type { DrainTransport } from './drain-transport.ts';
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

/** A network drain without a scheme or a port that names a transport. */
export const DEFAULT_TRANSPORT: Transport = 'tcp';

/** The transport a `<scheme>://` host prefix names, if any. */
export function transportOfScheme(scheme: string): Transport | undefined {
  const s = scheme.toLowerCase();
  return transportNames().find((t) => DRAIN_TRANSPORTS[t].schemes.includes(s));
}

/** The transport a port names when the host has no scheme (6514 → TLS). */
export function transportOfPort(port: string): Transport | undefined {
  return transportNames().find((t) => DRAIN_TRANSPORTS[t].ports?.includes(port));
}

/** A stored row's transport; a name this code never writes falls back to a file, as it always did. */
export function drainTransport(name: string): DrainTransport {
  return isTransport(name) ? DRAIN_TRANSPORTS[name] : DRAIN_TRANSPORTS.file;
}

function isTransport(name: string): name is Transport {
  return Object.hasOwn(DRAIN_TRANSPORTS, name);
}

function transportNames(): Transport[] {
  return Object.keys(DRAIN_TRANSPORTS).filter(isTransport);
}
