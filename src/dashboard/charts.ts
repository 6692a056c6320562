// Line charts as inline SVG: a series of {time, value} points scaled into a fixed viewBox.
const NS = 'http://www.w3.org/2000/svg';
const W = 300;
const H = 100;

export interface Point {
  time: string;
  value: number;
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** Replaces the chart's drawing with the points; `format` writes the latest value. */
export function drawChart(box: HTMLElement, title: string, points: Point[], format: (v: number) => string): void {
  const head = document.createElement('div');
  head.className = 'title';
  const name = document.createElement('span');
  name.textContent = title;
  const last = document.createElement('span');
  last.textContent = points.length ? format(points[points.length - 1].value) : 'no data yet';
  head.append(name, last);
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': title });
  if (points.length) {
    const times = points.map((p) => Date.parse(p.time));
    const t0 = Math.min(...times);
    const t1 = Math.max(...times, t0 + 1);
    const max = Math.max(...points.map((p) => p.value), 1e-9) * 1.1;
    const xy = points.map(
      (p, i) => `${(((times[i] - t0) / (t1 - t0)) * W).toFixed(1)},${(H - (p.value / max) * H).toFixed(1)}`,
    );
    if (points.length === 1) xy.push(`${W},${xy[0].split(',')[1]}`);
    root.append(
      svg('polygon', { class: 'area', points: `0,${H} ${xy.join(' ')} ${W},${H}` }),
      svg('polyline', { points: xy.join(' ') }),
    );
  }
  box.replaceChildren(head, root);
  box.dataset.points = String(points.length);
}

export const percent = (v: number) => `${(v * 100).toFixed(1)} %`;
export const bytes = (v: number) =>
  v >= 1 << 30
    ? `${(v / (1 << 30)).toFixed(2)} GiB`
    : v >= 1 << 20
      ? `${(v / (1 << 20)).toFixed(1)} MiB`
      : `${(v / 1024).toFixed(0)} KiB`;
export const perMinute = (v: number) => `${v.toFixed(0)} req/min`;
