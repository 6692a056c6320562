// One log line: its normalised time, the platform's text format, and the `filter` matcher.
import { RE2JS } from 're2js';
import { ApiError } from '../../http/errors.ts';

/**
 * A line, waiting to be stored (seq 0) or stored (a line of a log_chunks row, unpacked by the store). `ts` is normalised (see
 * normaliseTimestamp). From the collector to the store, the hub and the drains a line is this one object:
 * the pipeline writes its seq in place once stored (issue 25: one object a line on the ingest path).
 */
export interface StoredLine {
  seq: number;
  app_id: string;
  ts: string;
  time_ms: number;
  container: string;
  /** 0 stdout, 1 stderr. */
  stream: number;
  text: string;
  /** formatLine() of it, computed once and shared by the hub and the file drains. */
  formatted?: string;
}

/** A line to be stored, with every field the stored line has (one shape all the way: no property added later). */
export function newLine(
  appId: string,
  ts: string,
  timeMs: number,
  container: string,
  stream: 0 | 1,
  text: string,
): StoredLine {
  return { seq: 0, app_id: appId, ts, time_ms: timeMs, container, stream, text, formatted: undefined };
}

const DOCKER_NANO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;
const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/**
 * Docker writes RFC 3339 with nanoseconds and trailing zeros trimmed (`…:43.93Z`). Stored form:
 * UTC with exactly 9 fractional digits, so text order is time order and no precision is lost.
 */
export function normaliseTimestamp(ts: string): string | null {
  // Docker's usual form is already the stored one (UTC, 9 digits): kept as is, nothing built.
  if (ts.length === 30 && DOCKER_NANO.test(ts)) return ts;
  const m = RFC3339.exec(ts);
  if (!m) return null;
  const frac = (m[2] ?? '').padEnd(9, '0');
  if (m[3] === 'Z') return `${m[1]}.${frac}Z`;
  // An offset: convert through Date (ms precision) and keep the sub-millisecond digits.
  const ms = Date.parse(`${m[1]}.${frac.slice(0, 3)}${m[3]}`);
  if (Number.isNaN(ms)) return null;
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

/** A ms time (lines pushed through append) in the stored form. */
export function timestampFromMs(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2024-01-01T00:00:00.123Z
  return `${iso.slice(0, 23)}000000Z`;
}

/**
 * The platform's line, as Go prints a time.Time (`2006-01-02 15:04:05.999999999 -0700 MST`, trailing
 * zeros of the fraction trimmed) then ` [container] message`. The official CLI splits on spaces:
 * tokens 0–3 are the date, token 4 the container (docs/research/clients-runtime.md §2.3).
 */
export function formatLine(l: { ts: string; container: string; text: string }): string {
  let end = 29;
  while (end > 20 && l.ts.charCodeAt(end - 1) === 48 /* 0 */) end--;
  const frac = l.ts.slice(20, end);
  return `${l.ts.slice(0, 10)} ${l.ts.slice(11, 19)}${frac ? `.${frac}` : ''} +0000 UTC [${l.container}] ${l.text}`;
}

/** formatLine, cached on the line (one batch feeds many subscribers and drains). */
export function formattedLine(l: StoredLine): string {
  return (l.formatted ??= formatLine(l));
}

/** Go's UnixDate-like form the platform uses for archive bounds: `Fri Mar 24 14:00:00 +0000 UTC 2017`. */
export function archiveDate(ms: number): string {
  // toUTCString: "Fri, 24 Mar 2017 14:00:00 GMT"
  const [dow, day, mon, year, time] = new Date(ms).toUTCString().replace(',', '').split(' ');
  return `${dow} ${mon} ${day} ${time} +0000 UTC ${year}`;
}

/** Longest `filter` accepted: container names and types are short; a longer pattern is a mistake. */
export const MAX_FILTER = 200;

/**
 * `filter`: a container name (web-1), a type (web) or a simple regular expression (web|worker).
 * One rule covers the three: the filter must match the whole name, or the whole type (the name
 * without its `-<index>`). Empty = everything. A bad expression is a 400 with the reason.
 * Matching is RE2 (re2js): linear in the name's length whatever the pattern, so a pattern like
 * `(a+)+b` cannot stall the process; back-references and look-arounds are refused as invalid.
 */
export function compileFilter(filter: string | undefined | null): ((container: string) => boolean) | null {
  if (filter === undefined || filter === null || filter.trim() === '') return null;
  if (filter.length > MAX_FILTER) throw ApiError.badRequest(`invalid filter: longer than ${MAX_FILTER} characters`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^(?:${filter})(?:-\\d+)?$`);
  } catch (err) {
    throw ApiError.badRequest(
      `invalid filter "${filter}": not a container name, a container type or a valid regular expression (${(err as Error).message})`,
    );
  }
  const cache = new Map<string, boolean>();
  return (container) => {
    let v = cache.get(container);
    if (v === undefined) {
      v = re.matches(container);
      if (cache.size < 1000) cache.set(container, v);
    }
    return v;
  };
}

/** The container name the platform shows: `<type>-<index>` (web-1, one-off-3), or the label as is. */
export function containerName(type: string | undefined, index: string | undefined): string | null {
  if (!type) return null;
  return index ? `${type}-${index}` : type;
}
