// Drain types, what each requires (spec "Log drain" table, research §3.2), and the url the
// platform composes for each. Where the platform's url is undocumented the shape is invented
// but stable (docs/fidelity.md "Logs").
import { ApiError, type FieldErrors } from '../../http/errors.ts';
import {
  DEFAULT_TRANSPORT,
  DRAIN_TRANSPORTS,
  LOCAL_TRANSPORT,
  type Transport,
  transportOfPort,
  transportOfScheme,
} from './drain-transports.ts';
import { type DrainInput } from './drains.schemas.ts';

type Field = 'token' | 'host' | 'port' | 'drain_region' | 'url';

interface TypeRule {
  required: Field[];
  /** Delivered as syslog to host:port (network mode); otherwise written to a file. */
  syslog: boolean;
  /** A fixed port (ovh-graylog: 6514, syslog over TLS). */
  port?: string;
  url(d: Normalised): string;
}

interface Normalised {
  token: string;
  host: string;
  port: string;
  drain_region: string;
  url: string;
  transport: Transport;
}

/** syslog://… over TCP stays as documented; other transports show in the scheme. */
const suffix = (t: Transport) => DRAIN_TRANSPORTS[t].url.suffix;

export const DRAIN_TYPES: Record<string, TypeRule> = {
  appsignal: {
    required: ['token', 'host', 'port'],
    syslog: true,
    url: (d) => `appsignal${suffix(d.transport)}://:${d.token}@${d.host}:${d.port}`,
  },
  betterstack: { required: ['token', 'host'], syslog: false, url: (d) => `betterstack://:${d.token}@${d.host}` },
  logtail: { required: ['token'], syslog: false, url: (d) => `logtail://${d.token}` },
  datadog: {
    required: ['token', 'drain_region'],
    syslog: false,
    url: (d) => `datadog://${d.token}?region=${d.drain_region}`,
  },
  'ovh-graylog': {
    required: ['token', 'host'],
    syslog: true,
    port: '6514',
    url: (d) => `ovh://:${d.token}@${d.host}:6514`,
  },
  logentries: { required: ['token'], syslog: false, url: (d) => `logentries://${d.token}` },
  papertrail: {
    required: ['host', 'port'],
    syslog: true,
    url: (d) => `${DRAIN_TRANSPORTS[d.transport].url.scheme}://${d.host}:${d.port}`,
  },
  syslog: {
    required: ['token', 'host', 'port'],
    syslog: true,
    url: (d) => `syslog${suffix(d.transport)}://:${d.token}@${d.host}:${d.port}`,
  },
  elk: { required: ['url'], syslog: false, url: (d) => d.url },
};

const HOST = /^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[?[0-9A-Fa-f:.]+\]?$/;
/** `<scheme>://host`: the target url's scheme, given on the host, names a transport (its `schemes`). */
const SCHEME_PREFIX = /^([A-Za-z+]+):\/\/(.*)$/;

/**
 * Checks the type's required fields (422 naming each missing one) and their shapes, picks the
 * transport and composes the url. The drain's target is `<scheme>://host:port`, the scheme given
 * as a prefix on host; the transport declaring that scheme in DRAIN_TRANSPORTS is chosen (`udp://`,
 * `tcp://`, `tls://`…). Without one, a transport declaring the port (6514: TLS), else DEFAULT_TRANSPORT.
 * A network transport's lines go to the drain's file instead (LOCAL_TRANSPORT) when the type has
 * no syslog endpoint or the drains mode is `file`.
 */
export function normaliseDrain(
  input: DrainInput,
  mode: 'network' | 'file',
): { type: string; url: string } & Normalised {
  const rule = Object.hasOwn(DRAIN_TYPES, input.type) ? DRAIN_TYPES[input.type] : undefined;
  if (!rule)
    throw ApiError.invalid('type', `is not a supported drain type (supported: ${Object.keys(DRAIN_TYPES).join(', ')})`);
  const errors: FieldErrors = {};
  for (const f of rule.required) if (!input[f]) errors[f] = [`missing field: required for type ${input.type}`];
  if (Object.keys(errors).length) throw ApiError.unprocessable(errors);

  let host = input.host;
  let transport: Transport = DEFAULT_TRANSPORT;
  let explicit = false;
  const m = SCHEME_PREFIX.exec(host);
  const named = m ? transportOfScheme(m[1]) : undefined;
  if (m && named) {
    transport = named;
    explicit = true;
    host = m[2];
  }
  if (rule.required.includes('host') && !HOST.test(host)) errors.host = ['is not a valid host name or address'];
  const port = rule.port ?? input.port;
  if (rule.required.includes('port') && (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535))
    errors.port = ['must be a port number (1-65535)'];
  if (rule.required.includes('url') && !/^https?:\/\/\S+$/i.test(input.url)) errors.url = ['must be an http(s) URL'];
  if (rule.required.includes('drain_region') && !/^[A-Za-z0-9._-]+$/.test(input.drain_region))
    errors.drain_region = ['is not a valid region'];
  if (rule.required.includes('token') && /\s/.test(input.token)) errors.token = ['must not contain spaces'];
  if (Object.keys(errors).length) throw ApiError.unprocessable(errors);

  if (!explicit) transport = transportOfPort(port) ?? transport;
  // The url shows the transport asked for, even when lines go to a file: it stays stable.
  const asked = transport;
  const networkUnused = !rule.syslog || mode === 'file';
  if (networkUnused && DRAIN_TRANSPORTS[transport].reach === 'network') transport = LOCAL_TRANSPORT;
  const d: Normalised = {
    token: input.token,
    host: host.replace(/^\[|\]$/g, ''),
    port,
    drain_region: input.drain_region,
    url: input.url,
    transport,
  };
  return { type: input.type, ...d, url: rule.url({ ...d, host, transport: asked }) };
}
