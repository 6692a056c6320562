// An app's overview (#/apps/<name>): its containers (live) with scale and restart controls, live
// logs, metrics charts, events, alerts (firing or not) and the deployments with their output.
import { type ApiFailure, api, control, logsSocketUrl } from './api.ts';
import { bytes, drawChart, type Point, percent, perMinute } from './charts.ts';
import { showDeployments } from './deployments-view.ts';
import { ago, badge, every, fill, h, onLeave } from './dom.ts';
import { followOperation, messageLine, restartApp } from './operations.ts';

interface Formation {
  name: string;
  amount: number;
  size: string;
}
interface Ps {
  id: string;
  label: string;
  type: string;
  state: string;
  size: string;
  created_at: string;
}

export function showApp(main: HTMLElement, name: string): void {
  const path = `/v1/apps/${encodeURIComponent(name)}`;
  const status = h('span');
  const link = h('a', { target: '_blank', rel: 'noopener noreferrer' });
  const formationBox = h('div');
  const psBody = h('tbody');
  const message = messageLine('message');
  const logs = h('pre', { class: 'logs', id: 'logs' });
  const logState = h('span', { class: 'muted', id: 'log-state' }, 'connecting…');
  const charts = {
    cpu: h('div', { class: 'chart', id: 'chart-cpu' }),
    memory: h('div', { class: 'chart', id: 'chart-memory' }),
    router: h('div', { class: 'chart', id: 'chart-router' }),
  };
  const events = h('ul', { class: 'timeline', id: 'events' });
  const alertsBody = h('tbody');
  const alertsEmpty = h('p', { class: 'muted' });
  const deployments = h('div', { class: 'below' });

  fill(
    main,
    h('p', { class: 'app-head' }, status, ' ', link),
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        { class: 'card', id: 'containers' },
        h('h2', {}, 'Containers'),
        formationBox,
        h(
          'table',
          {},
          h(
            'thead',
            {},
            h('tr', {}, h('th', {}, 'Container'), h('th', {}, 'State'), h('th', {}, 'Size'), h('th', {}, 'Started')),
          ),
          psBody,
        ),
        message.el,
      ),
      h('section', { class: 'card' }, h('h2', {}, 'Logs ', logState), logs),
      h(
        'section',
        { class: 'card wide' },
        h('h2', {}, 'Metrics (last hour, web)'),
        h('div', { class: 'charts' }, charts.cpu, charts.memory, charts.router),
      ),
      h('section', { class: 'card' }, h('h2', {}, 'Events'), events),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Alerts'),
        h(
          'table',
          { id: 'alerts' },
          h(
            'thead',
            {},
            h('tr', {}, h('th', {}, 'Metric'), h('th', {}, 'Type'), h('th', {}, 'Limit'), h('th', {}, 'State')),
          ),
          alertsBody,
        ),
        alertsEmpty,
      ),
    ),
    deployments,
  );
  // The deployments with their output, as on the Deployments tab.
  showDeployments(deployments, name);

  let formationShown = '';
  every(1500, async () => {
    const [app, formation, ps] = await Promise.all([
      api<{ app: { status: string; url: string } }>('GET', path),
      api<{ containers: Formation[] }>('GET', `${path}/containers`),
      api<{ containers: Ps[] }>('GET', `${path}/ps`),
    ]);
    fill(status, badge(app.body.app.status));
    link.textContent = app.body.app.url;
    link.setAttribute('href', app.body.app.url);
    // The scale inputs are rebuilt only when the formation changed (a user may be typing).
    const key = JSON.stringify(formation.body.containers);
    if (key !== formationShown) {
      formationShown = key;
      fill(
        formationBox,
        ...formation.body.containers.map((f) => formationRow(f)),
        h(
          'div',
          { class: 'row' },
          h(
            'button',
            {
              class: 'secondary',
              id: 'restart',
              onclick: () => void restartApp(message, path),
            },
            'Restart all',
          ),
        ),
      );
    }
    fill(
      psBody,
      ...ps.body.containers.map((c) =>
        h(
          'tr',
          { 'data-container': c.label },
          h('td', {}, c.label),
          h('td', {}, badge(c.state)),
          h('td', {}, c.size),
          h('td', {}, ago(c.created_at)),
        ),
      ),
    );
  });

  function formationRow(f: Formation) {
    const input = h('input', {
      type: 'number',
      min: 0,
      max: 50,
      value: f.amount,
      id: `amount-${f.name}`,
      'aria-label': `${f.name} amount`,
    });
    return h(
      'div',
      { class: 'row' },
      h('strong', {}, f.name),
      input,
      h('span', { class: 'muted' }, `× ${f.size}`),
      h(
        'button',
        {
          id: `scale-${f.name}`,
          onclick: () =>
            void followOperation(message, `Scale ${f.name} to ${input.value}`, () =>
              api('POST', `${path}/scale`, { containers: [{ name: f.name, amount: Number(input.value) }] }),
            ),
        },
        'Scale',
      ),
    );
  }

  // Live logs through the logs service's WebSocket (the signed logs_url, as the CLI's `logs -f`).
  let socket: WebSocket | null = null;
  let closed = false;
  async function connectLogs() {
    try {
      const { body } = await api<{ logs_url: string }>('GET', `${path}/logs`);
      const lines = await fetch(`${body.logs_url}&n=100`).then((r) => (r.ok ? r.text() : ''));
      logs.textContent = lines;
      logs.scrollTop = logs.scrollHeight;
      socket = new WebSocket(logsSocketUrl(body.logs_url));
      socket.onopen = () => (logState.textContent = 'live');
      socket.onmessage = (m) => {
        const e = JSON.parse(String(m.data)) as { event: string; log?: string };
        if (e.event !== 'log' || !e.log) return;
        const stick = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
        logs.append(e.log.endsWith('\n') ? e.log : `${e.log}\n`);
        // Bounded: the oldest lines go past 2,000.
        while (logs.childNodes.length > 2000 && logs.firstChild) logs.firstChild.remove();
        if (stick) logs.scrollTop = logs.scrollHeight;
      };
      socket.onclose = () => {
        logState.textContent = 'disconnected, reconnecting…';
        if (!closed) setTimeout(() => void connectLogs(), 2000);
      };
    } catch (err) {
      logState.textContent = `unavailable (${(err as Error).message})`;
      if (!closed) setTimeout(() => void connectLogs(), 5000);
    }
  }
  void connectLogs();
  onLeave(() => {
    closed = true;
    socket?.close();
  });

  every(5000, async () => {
    const series = (metric: string) =>
      api<Point[]>('GET', `${path}/stats/${metric}/web?since=1`).then(
        (r) => r.body,
        (err: ApiFailure) => (err.status === 404 ? [] : Promise.reject(err)),
      );
    const router = await api<Point[]>('GET', `${path}/stats/router?since=1`).then((r) => r.body);
    const [cpu, memory] = await Promise.all([series('cpu'), series('memory')]);
    drawChart(charts.cpu, 'CPU', cpu, percent);
    drawChart(charts.memory, 'Memory', memory, bytes);
    drawChart(charts.router, 'Router requests', router, perMinute);
  });

  every(3000, async () => {
    const { body } = await api<{
      events: Array<{
        id: string;
        type: string;
        created_at: string;
        user?: { username: string };
        type_data?: Record<string, unknown>;
      }>;
    }>('GET', `${path}/events?per_page=30`);
    fill(
      events,
      ...body.events.map((e) =>
        h(
          'li',
          { 'data-event': e.type },
          h('time', {}, new Date(e.created_at).toLocaleString()),
          h(
            'span',
            {},
            h('strong', {}, e.type.replace(/_/g, ' ')),
            ` ${e.user?.username ? `by ${e.user.username}` : ''} ${summary(e.type_data)}`,
          ),
        ),
      ),
    );
  });

  every(3000, async () => {
    const { body } = await api<{
      alerts: Array<{
        id: string;
        metric: string;
        container_type: string;
        limit: number;
        send_when_below: boolean;
        disabled: boolean;
      }>;
    }>('GET', `${path}/alerts`);
    const ids = body.alerts.map((a) => a.id);
    const states = ids.length
      ? (
          await control<{ alert_states: Record<string, boolean> }>(
            `/_emulator/dashboard/apps/${encodeURIComponent(name)}/alert-states?ids=${ids.join(',')}`,
          )
        ).alert_states
      : {};
    fill(
      alertsBody,
      ...body.alerts.map((a) =>
        h(
          'tr',
          { 'data-alert': a.id },
          h('td', {}, a.metric),
          h('td', {}, a.container_type),
          h('td', {}, `${a.send_when_below ? '<' : '>'} ${a.limit}`),
          h('td', {}, badge(a.disabled ? 'disabled' : states[a.id] ? 'firing' : 'ok')),
        ),
      ),
    );
    alertsEmpty.textContent = body.alerts.length ? '' : 'No alerts.';
  });
}

function summary(data: Record<string, unknown> | undefined): string {
  if (!data) return '';
  const parts = Object.entries(data)
    .filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v) && v !== '')
    .slice(0, 4)
    .map(([k, v]) => `${k}=${String(v)}`);
  return parts.length ? `(${parts.join(', ')})` : '';
}
