// An app's settings (#/apps/<name>/settings): the router settings as switches (PATCH /v1/apps/:app,
// as `scalingo force-https`, `sticky-session`, `router-logs`), and read views of its domains,
// collaborators, cron tasks and autoscalers.
import { ApiFailure, api } from './api.ts';
import { ago, badge, every, fill, h, refill } from './dom.ts';
import { attempt, messageLine } from './operations.ts';

type Setting = 'force_https' | 'sticky_session' | 'router_logs';
const SETTINGS: [Setting, string][] = [
  ['force_https', 'Force HTTPS (the router redirects http:// to https://)'],
  ['sticky_session', 'Sticky sessions (a client stays on one container)'],
  ['router_logs', "Router logs (each request in the app's logs)"],
];

type Rows<V extends { show: (rows: never[]) => void }> = Parameters<V['show']>[0];

/** A read view: a table refreshed from one GET, rebuilt only when its rows change. */
function readView<T>(id: string, heads: string[], empty: string, cells: (row: T) => (Node | string)[]) {
  const body = h('tbody');
  const none = h('p', { class: 'muted' });
  const el = h(
    'section',
    { class: 'card' },
    h('h2', {}, id[0].toUpperCase() + id.slice(1).replace(/-/g, ' ')),
    h('table', { id }, h('thead', {}, h('tr', {}, ...heads.map((t) => h('th', {}, t)))), body),
    none,
  );
  const show = (rows: T[]) => {
    refill(body, rows, () => rows.map((r) => h('tr', {}, ...cells(r).map((c) => h('td', {}, c)))));
    none.textContent = rows.length ? '' : empty;
    none.className = 'muted';
  };
  const fail = (err: Error) => {
    none.textContent = err.message;
    none.className = 'message error';
  };
  return { el, show, fail };
}

export function showSettings(box: HTMLElement, name: string): void {
  const path = `/v1/apps/${encodeURIComponent(name)}`;
  const line = messageLine('settings-message');
  const readFailed = (err: Error) => line.say(`Settings: ${err.message}`, true);
  const switches = new Map<Setting, HTMLInputElement>();
  for (const [key] of SETTINGS) {
    const input = h('input', { type: 'checkbox', id: `setting-${key}` });
    input.addEventListener('change', () => void change(key, input));
    switches.set(key, input);
  }
  const domains = readView<{ name: string; ssl: boolean; canonical: boolean; letsencrypt_status: string }>(
    'domains',
    ['Domain', 'TLS', 'Canonical'],
    'No custom domain.',
    (d) => [d.name, d.ssl ? `yes (${d.letsencrypt_status})` : 'no', d.canonical ? 'yes' : ''],
  );
  const collaborators = readView<{ username: string; email: string; status: string; is_limited: boolean }>(
    'collaborators',
    ['User', 'E-mail', 'Status', 'Role'],
    'No collaborator.',
    (c) => [c.username, c.email, badge(c.status), c.is_limited ? 'limited' : 'collaborator'],
  );
  const cron = readView<{
    command: string;
    size?: string;
    last_execution_date: string | null;
    next_execution_date: string | null;
  }>(
    'cron-tasks',
    ['Command', 'Size', 'Last run', 'Next run'],
    'No cron task (cron.json at the root of a deployment declares them).',
    (j) => [
      h('code', {}, j.command),
      j.size ?? '',
      ago(j.last_execution_date),
      j.next_execution_date ? new Date(j.next_execution_date).toLocaleString() : '—',
    ],
  );
  const autoscalers = readView<{
    container_type: string;
    metric: string;
    target_text: string;
    min_containers: number;
    max_containers: number;
    disabled: boolean;
  }>('autoscalers', ['Type', 'Metric', 'Target', 'Containers', 'State'], 'No autoscaler.', (a) => [
    a.container_type,
    a.metric,
    a.target_text,
    `${a.min_containers}–${a.max_containers}`,
    badge(a.disabled ? 'disabled' : 'enabled'),
  ]);
  fill(
    box,
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        { class: 'card', id: 'settings' },
        h('h2', {}, 'Settings'),
        ...SETTINGS.map(([key, label]) => h('label', { class: 'switch' }, switches.get(key), ` ${label}`)),
        line.el,
      ),
      domains.el,
      collaborators.el,
      cron.el,
      autoscalers.el,
    ),
  );

  async function change(key: Setting, input: HTMLInputElement) {
    input.disabled = true;
    const done = await attempt(line, key, () => api('PATCH', path, { app: { [key]: input.checked } }));
    if (done) line.say(`${key.replace(/_/g, ' ')}: ${input.checked ? 'on' : 'off'}`);
    else input.checked = !input.checked;
    input.disabled = false;
  }

  every(3000, async () => {
    const get = <T>(p: string) => api<T>('GET', `${path}${p}`).then((r) => r.body);
    // Each view on its own: one refused read (a Limited Collaborator's 403, say) says so in its card only.
    await Promise.all([
      get<{ app: Record<Setting, boolean> }>('').then(({ app }) => {
        for (const [key, input] of switches) if (!input.disabled) input.checked = app[key];
      }, readFailed),
      get<{ domains: Rows<typeof domains> }>('/domains').then((r) => domains.show(r.domains), domains.fail),
      get<{ collaborators: Rows<typeof collaborators> }>('/collaborators').then(
        (r) => collaborators.show(r.collaborators),
        collaborators.fail,
      ),
      // The platform answers 404 when the deployed code has no cron.json: no task, rather than an error.
      get<{ jobs: Rows<typeof cron> }>('/cron_tasks').then(
        (r) => cron.show(r.jobs),
        (err: Error) => (err instanceof ApiFailure && err.status === 404 ? cron.show([]) : cron.fail(err)),
      ),
      get<{ autoscalers: Rows<typeof autoscalers> }>('/autoscalers').then(
        (r) => autoscalers.show(r.autoscalers),
        autoscalers.fail,
      ),
    ]);
  });
}
