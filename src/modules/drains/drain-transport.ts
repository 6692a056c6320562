// What a drain transport is: how a drain's lines leave the emulator. Each transport is one object
// in DRAIN_TRANSPORTS (drain-transports.ts), after LocalStack's SNS `topic_notifiers` table
// (localstack/services/sns/publisher.py): the table picks, the object sends.
import type { StoredLine } from '../logs/log-line.ts';
import type { DrainTarget, TargetOptions } from './drain-targets.ts';
import type { DrainRow } from './drains.store.ts';

/** What `format` may put in a message besides the line. */
export interface FormatContext {
  /** HOSTNAME of syslog messages. */
  hostname: string;
  /** The app's current name (follows renames). */
  appName: string;
  /** The drain's token, sent in the structured data when set. */
  token: string | null;
}

export interface DrainTransport {
  /** `<scheme>://` prefixes on a drain's host that choose this transport (case-insensitive). */
  readonly schemes: readonly string[];
  /** Ports that choose it when the host has no scheme (6514: syslog over TLS, RFC 5425). */
  readonly ports?: readonly string[];
  /** How drain urls name it: `syslog<suffix>://…`, and papertrail's `<scheme>://host:port`. */
  readonly url: { suffix: string; scheme: string };
  /** A target with its own bounded queue, back-off and socket `error` handler (drain-targets.ts). */
  create(row: DrainRow, ctx: { options: TargetOptions; file: string }): DrainTarget;
  /** One line as the message this transport sends (framing, if any, is the target's). */
  format(line: StoredLine, ctx: FormatContext): string;
}

/** host:port of a network drain; normaliseDrain requires both for every syslog type. */
export function networkEndpoint(row: DrainRow): { host: string; port: number } {
  if (!row.host) throw new Error(`log drain ${row.id}: a ${row.transport} drain without a host`);
  return { host: row.host, port: Number(row.port) };
}
