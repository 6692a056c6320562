// Tiny DOM helpers: elements are built with text nodes only (no innerHTML), so nothing an app
// prints — log lines, build output, names — can become markup.
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (k === 'class') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children)
    if (c !== null && c !== undefined && c !== false)
      el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
}

/** Replaces the element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

export function badge(text: string): HTMLSpanElement {
  return h('span', { class: `badge ${text}`, 'data-status': text }, text);
}

export function ago(iso: string | null | undefined): string {
  if (!iso) return '—';
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000);
  if (s < 60) return `${Math.max(0, s)} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleString();
}

/** Timers of the page on screen, cleared when another page is shown. */
const timers = new Set<number>();
const cleanups = new Set<() => void>();

export function every(ms: number, fn: () => Promise<void> | void): void {
  let busy = false;
  const run = async () => {
    if (busy) return;
    busy = true;
    try {
      await fn();
    } catch (err) {
      console.warn(err);
    } finally {
      busy = false;
    }
  };
  void run();
  timers.add(window.setInterval(run, ms));
}

export function onLeave(fn: () => void): void {
  cleanups.add(fn);
}

export function leavePage(): void {
  for (const t of timers) clearInterval(t);
  timers.clear();
  for (const f of cleanups) f();
  cleanups.clear();
}

/** An element index.html declares: a missing one is a broken page, said plainly. */
export function byId(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

/** Rebuilds an element's children only when what they show changed (a user may be typing or clicking in them). */
export function refill(el: HTMLElement, key: unknown, build: () => Child[]): void {
  const text = JSON.stringify(key);
  if (el.dataset.shown === text) return;
  el.dataset.shown = text;
  fill(el, ...build());
}

/**
 * A secret shown as dots until revealed, with a button copying the real text (the clipboard API:
 * 127.0.0.1 and localhost are secure contexts). `shown` is the text with its secret parts masked.
 */
export function secretText(id: string, secret: string, shown: string): HTMLSpanElement {
  const text = h('code', { id, 'data-masked': 'true' }, shown);
  const reveal = h('button', { class: 'small secondary', id: `${id}-reveal` }, 'Show');
  reveal.addEventListener('click', () => {
    const masked = text.dataset.masked === 'true';
    text.textContent = masked ? secret : shown;
    text.dataset.masked = String(!masked);
    reveal.textContent = masked ? 'Hide' : 'Show';
  });
  return h(
    'span',
    { class: 'secret' },
    text,
    reveal,
    copyButton(`${id}-copy`, () => secret),
  );
}

export function copyButton(id: string, text: () => string): HTMLButtonElement {
  const button = h('button', { class: 'small secondary', id }, 'Copy');
  button.addEventListener('click', () => {
    void navigator.clipboard.writeText(text()).then(
      () => (button.textContent = 'Copied'),
      () => (button.textContent = 'Copy failed'),
    );
    setTimeout(() => (button.textContent = 'Copy'), 2000);
  });
  return button;
}

/** A URL with its password as dots (postgres://user:••••••@host:port/db); a text that is no URL, all dots. */
export function maskUrl(value: string): string {
  try {
    const u = new URL(value);
    if (!u.password) return value;
    return `${u.protocol}//${u.username}:••••••@${u.host}${u.pathname}${u.search}`;
  } catch {
    return '•'.repeat(Math.min(12, value.length));
  }
}
