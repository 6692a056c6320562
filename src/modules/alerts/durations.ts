// Go's time.Duration as the official clients write it: an integer of nanoseconds in JSON
// (duration_before_trigger; remind_every on the Go CLI's update), or Duration.String() text
// ("1h0m0s", "5m0s", "1.5s", "300ms") for remind_every in responses and on create.

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 6e10, h: 3.6e12 };
const COMPONENT = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/y;

/** time.ParseDuration: "1h30m", "1.5s", "300ms", "0". Returns null when the text is not a duration. */
export function parseGoDuration(text: string): number | null {
  let s = text.trim();
  let sign = 1;
  if (s[0] === '-' || s[0] === '+') {
    sign = s[0] === '-' ? -1 : 1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return null;
  let total = 0;
  COMPONENT.lastIndex = 0;
  while (COMPONENT.lastIndex < s.length) {
    const m = COMPONENT.exec(s);
    if (!m || (m[1] === '' && !m[2])) return null;
    const unit = UNIT_NS[m[3]];
    total += Number(m[1] || '0') * unit;
    if (m[2]) total += Math.round(Number(`0.${m[2]}`) * unit);
  }
  return sign * total;
}

/** Duration.String(): "0s", "300ms", "1.5µs", "45s", "5m0s", "1h0m0s", "2h3m4.005s". */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s';
  let u = Math.abs(Math.trunc(ns));
  let out: string;
  if (u < 1e9) {
    out = u < 1e3 ? `${u}ns` : u < 1e6 ? `${fraction(u, 1e3)}µs` : `${fraction(u, 1e6)}ms`;
  } else {
    const h = Math.floor(u / 3.6e12);
    u -= h * 3.6e12;
    const m = Math.floor(u / 6e10);
    u -= m * 6e10;
    const s = `${fraction(u, 1e9)}s`;
    out = h > 0 ? `${h}h${m}m${s}` : m > 0 ? `${m}m${s}` : s;
  }
  return ns < 0 ? `-${out}` : out;
}

function fraction(v: number, unit: number): string {
  const whole = Math.floor(v / unit);
  const rest = v - whole * unit;
  if (rest === 0) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}

/**
 * A duration field of a request: an integer of nanoseconds, a numeric string, or Go duration text.
 * Returns null for "" (unset), undefined when the value is not a duration at all.
 */
export function durationInput(value: unknown): number | null | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  if (value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const ns = parseGoDuration(value);
  return ns === null || ns < 0 ? undefined : ns;
}

export const msFromNs = (ns: number) => ns / 1e6;
