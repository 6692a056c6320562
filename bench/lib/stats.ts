/** Small number helpers shared by the sections. */

export function median(xs: number[]): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(xs: number[], p: number): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

export const max = (xs: number[]) => Math.max(...xs);
export const min = (xs: number[]) => Math.min(...xs);

/** 12345.6 → "12,346" */
export function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

/** Milliseconds with a precision that suits their size. */
export function ms(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  return n < 10 ? `${n.toFixed(2)} ms` : n < 100 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`;
}

/** Microseconds. */
export function us(n: number | null): string {
  return n === null || !Number.isFinite(n) ? 'n/a' : `${Math.round(n)} µs`;
}

export function pct(ratio: number): string {
  return Number.isFinite(ratio) ? `${(ratio * 100).toFixed(1)} %` : 'n/a';
}

/** "best / median" of per-round figures, the way every table reports repeated measurements. */
export function bestMedian(xs: number[], fmt: (n: number) => string, higherIsBetter: boolean): string {
  if (xs.length === 1) return fmt(xs[0]);
  const best = higherIsBetter ? max(xs) : min(xs);
  return `${fmt(best)} / ${fmt(median(xs))}`;
}

export const sleep = (msDelay: number) => new Promise<void>((ok) => setTimeout(ok, msDelay));
