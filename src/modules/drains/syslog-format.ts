// RFC 5424 syslog messages, and RFC 6587 octet-counting framing for stream transports.
// Written here rather than taken from npm: syslog-client (the most used) fixes PROCID to the
// sender's pid, has no STRUCTURED-DATA and frames TCP with newlines; glossy is unmaintained
// (docs/fidelity.md "Logs").
//
//   <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD-ID params] MSG
//   <14>1 2024-05-01T10:00:00.123456Z emulator my-app web-1 log [emulator@32473 app="my-app" container="web-1"] hello
import { type StoredLine } from '../logs/log-line.ts';
import { type FormatContext } from './drain-transport.ts';

/** Facility `user` (1); stdout → severity 6 (informational), stderr → 3 (error). */
const FACILITY = 1;
const SEVERITY = { stdout: 6, stderr: 3 } as const;
/** 32473 is the enterprise number RFC 5612 reserves for examples and documentation. */
export const SD_ID = 'emulator@32473';

export interface SyslogFields {
  /** Stored ns timestamp (RFC 3339, 9 digits, Z); RFC 5424 allows 6 fractional digits at most. */
  ts: string;
  hostname: string;
  appName: string;
  procId: string;
  stream: 0 | 1 | number;
  text: string;
  /** Extra SD params (token, app id…). */
  params: Record<string, string>;
}

/** PRINTUSASCII (33–126) only, at most `max` characters; empty → NILVALUE. */
function header(value: string, max: number): string {
  const clean = value.replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return clean || '-';
}

/** PARAM-VALUE escaping: `"`, `\` and `]` get a backslash (RFC 5424 §6.3.3). */
function paramValue(v: string): string {
  return v.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/** SD-NAME: PRINTUSASCII except `=`, space, `]`, `"`; at most 32 characters. */
function sdName(v: string): string {
  return v.replace(/[^\x21-\x7e]|[=\]"]/g, '_').slice(0, 32) || '_';
}

export function formatRfc5424(f: SyslogFields): string {
  const pri = FACILITY * 8 + (f.stream === 1 ? SEVERITY.stderr : SEVERITY.stdout);
  const time = `${f.ts.slice(0, 26)}Z`; // 2024-05-01T10:00:00.123456Z
  const params = Object.entries(f.params)
    .map(([k, v]) => ` ${sdName(k)}="${paramValue(v)}"`)
    .join('');
  return `<${pri}>1 ${time} ${header(f.hostname, 255)} ${header(f.appName, 48)} ${header(f.procId, 128)} log [${SD_ID}${params}] ${f.text}`;
}

/** A stored line as the RFC 5424 message of a syslog drain (the `format` of the syslog transports). */
export function syslogMessage(l: StoredLine, ctx: FormatContext): string {
  const token: Record<string, string> = ctx.token ? { token: ctx.token } : {};
  return formatRfc5424({
    ts: l.ts,
    hostname: ctx.hostname,
    appName: ctx.appName,
    procId: l.container,
    stream: l.stream,
    text: l.text,
    params: { app: ctx.appName, app_id: l.app_id, container: l.container, ...token },
  });
}

/** RFC 6587 §3.4.1 octet counting: `<length in bytes> <message>`. */
export function octetFrame(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `), body]);
}
