// What a drain transport is: how a drain's lines leave the emulator. Each transport is one object
// in DRAIN_TRANSPORTS (drain-transports.ts), after LocalStack's SNS `topic_notifiers` table
// (localstack/services/sns/publisher.py): the table picks, the object sends. A transport declares
// the URL schemes that choose it; it receives the drain's parsed target and only its own options.
import { type EmulatorConfig } from '../../config/schema.ts';
import { type StoredLine } from '../logs/log-line.ts';
import { type DrainTarget, type TargetOptions } from './drain-targets.ts';

/** The `logs.drains` configuration section, from which each transport picks its own options. */
export type DrainsConfig = EmulatorConfig['logs']['drains'];

/** What `format` may put in a message besides the line. */
export interface FormatContext {
  /** HOSTNAME of syslog messages. */
  hostname: string;
  /** The app's current name (follows renames). */
  appName: string;
  /** The drain's token, sent in the structured data when set. */
  token: string | null;
}

/**
 * Where a drain's lines go, parsed from its stored row: `host` and `port` of the target url
 * (`<scheme>://host:port`, the scheme having chosen the transport), and the file under the data dir
 * reserved for the drain (`<state>/drains/<id>.log`). A network transport always gets a host and a port.
 */
export interface ParsedTarget {
  host: string;
  port: number;
  file: string;
}

/** A transport as its file declares it; `defineTransport` turns it into a registry entry. */
export interface TransportDeclaration<Options> {
  /**
   * URL schemes that choose this transport (lower case): a drain's target is `<scheme>://host:port`,
   * given as a `<scheme>://` prefix on the drain's host.
   */
  readonly schemes: readonly string[];
  /** Ports that choose it when the target has no scheme (6514: syslog over TLS, RFC 5425). */
  readonly ports?: readonly string[];
  /**
   * network: sends to host:port (the drain types with a syslog endpoint; in the `file` drains mode the
   * file transport stands in). local: writes on this machine, to `target.file`.
   */
  readonly reach: 'network' | 'local';
  /** How drain urls name it: `syslog<suffix>://…`, and papertrail's `<scheme>://host:port`. */
  readonly url: { suffix: string; scheme: string };
  /** This transport's own options, picked from the `logs.drains` configuration. */
  options(config: DrainsConfig): Options;
  /** A target with its own bounded queue, back-off and socket `error` handler (a QueuedTarget, drain-targets.ts). */
  create(target: ParsedTarget, queue: TargetOptions, options: Options): DrainTarget;
  /** One line as the message this transport sends (framing, if any, is the target's). */
  format(line: StoredLine, ctx: FormatContext): string;
}

/** A registry entry: the declaration with its options bound at `open`. */
export interface DrainTransport {
  readonly schemes: readonly string[];
  readonly ports?: readonly string[];
  readonly reach: 'network' | 'local';
  readonly url: { suffix: string; scheme: string };
  open(target: ParsedTarget, queue: TargetOptions, config: DrainsConfig): DrainTarget;
  format(line: StoredLine, ctx: FormatContext): string;
}

/** One transport's declaration as a registry entry (its options' type stays inside its file). */
export function defineTransport<Options>(d: TransportDeclaration<Options>): DrainTransport {
  return {
    schemes: d.schemes,
    ports: d.ports,
    reach: d.reach,
    url: d.url,
    open: (target, queue, config) => d.create(target, queue, d.options(config)),
    format: d.format,
  };
}

/** No options of its own. */
export const noOptions = (): undefined => undefined;
