// An app's deployments (#/apps/<name>/deployments): every deployment, page by page, and the output
// of the one picked — read from GET …/deployments/:id/output, and followed live through the app's
// deployments stream (links.deployments_stream, the clients' WebSocket) while it runs.
import { api, sessionBearer, socketUrl } from './api.ts';
import { ago, badge, every, fill, h, onLeave, refill } from './dom.ts';

interface Deployment {
  id: string;
  status: string;
  created_at: string;
  duration: number;
  git_ref: string | null;
  pusher: { username: string } | null;
}
interface Page {
  deployments: Deployment[];
  meta: { pagination: { current_page: number; total_pages: number; total_count: number } };
}

const FINISHED = new Set(['success', 'build-error', 'crashed-error', 'timeout-error', 'aborted', 'hook-error']);
const PER_PAGE = 20;

export function showDeployments(box: HTMLElement, name: string): void {
  const path = `/v1/apps/${encodeURIComponent(name)}`;
  const body = h('tbody');
  const pager = h('div', { class: 'row', id: 'deployments-pager' });
  const title = h('h2', {}, 'Output');
  const output = h('pre', { class: 'output', id: 'deployment-output' }, 'Pick a deployment to read its output.');
  const state = h('span', { class: 'muted', id: 'output-state' });
  fill(
    box,
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        { class: 'card' },
        h('h2', {}, 'Deployments'),
        h(
          'table',
          { id: 'deployments' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, 'Deployment'),
              h('th', {}, 'Status'),
              h('th', {}, 'Started'),
              h('th', {}, 'Duration'),
              h('th', {}, 'By'),
            ),
          ),
          body,
        ),
        pager,
      ),
      h('section', { class: 'card' }, title, state, output),
    ),
  );

  let page = 1;
  let shown: string | null = null;
  let stream: WebSocket | null = null;
  const stopStream = () => {
    stream?.close();
    stream = null;
  };
  onLeave(stopStream);

  async function open(d: Deployment) {
    shown = d.id;
    stopStream();
    for (const tr of body.querySelectorAll('tr')) tr.classList.toggle('selected', tr.dataset.deployment === d.id);
    title.textContent = `Output of ${d.id} `;
    const text = (await api<string>('GET', `${path}/deployments/${d.id}/output`)).body;
    if (shown !== d.id) return;
    output.textContent = text;
    state.textContent = d.status;
    if (!FINISHED.has(d.status)) await follow(d.id);
  }

  async function follow(id: string) {
    const { app } = (await api<{ app: { links: { deployments_stream: string } } }>('GET', path)).body;
    const ws = new WebSocket(socketUrl(app.links.deployments_stream));
    stream = ws;
    const token = await sessionBearer();
    ws.onopen = () => {
      ws.send(JSON.stringify({ type: 'auth', data: { token } }));
      state.textContent = 'live';
    };
    ws.onmessage = (m) => {
      const e = JSON.parse(String(m.data)) as { type: string; id?: string; data?: Record<string, string> };
      // The stream first replays the running deployment whole: `new` starts it over.
      if (e.type === 'new' && e.data?.deployment === id) output.textContent = '';
      if (e.id !== id) return;
      if (e.type === 'log' && e.data?.content) {
        output.append(e.data.content);
        output.scrollTop = output.scrollHeight;
      }
      if (e.type === 'status' && e.data?.status) {
        state.textContent = e.data.status;
        if (!FINISHED.has(e.data.status)) return;
        stopStream();
        // The whole output once it ended: the stream only has the lines said after it connected.
        void api<string>('GET', `${path}/deployments/${id}/output`).then((r) => {
          if (shown === id) output.textContent = r.body;
        });
      }
    };
    ws.onclose = () => {
      if (stream === ws) state.textContent = `${state.textContent} (stream closed)`;
    };
  }

  every(3000, async () => {
    const res = (await api<Page>('GET', `${path}/deployments?page=${page}&per_page=${PER_PAGE}`)).body;
    const { current_page, total_pages, total_count } = res.meta.pagination;
    refill(body, [res.deployments, shown], () =>
      res.deployments.map((d) =>
        h(
          'tr',
          {
            class: `clickable${d.id === shown ? ' selected' : ''}`,
            'data-deployment': d.id,
            onclick: () => void open(d),
          },
          h('td', {}, d.id, d.git_ref ? h('span', { class: 'muted' }, ` ${d.git_ref.slice(0, 8)}`) : null),
          h('td', {}, badge(d.status)),
          h('td', {}, ago(d.created_at)),
          h('td', {}, `${d.duration} s`),
          h('td', {}, d.pusher?.username ?? ''),
        ),
      ),
    );
    refill(pager, [current_page, total_pages, total_count], () => [
      h(
        'button',
        { class: 'small secondary', id: 'deployments-newer', disabled: current_page <= 1, onclick: () => go(-1) },
        'Newer',
      ),
      h('span', { class: 'muted' }, `page ${current_page} of ${Math.max(1, total_pages)} (${total_count} deployments)`),
      h(
        'button',
        {
          class: 'small secondary',
          id: 'deployments-older',
          disabled: current_page >= total_pages,
          onclick: () => go(1),
        },
        'Older',
      ),
    ]);
  });
  function go(step: number) {
    page = Math.max(1, page + step);
    delete body.dataset.shown;
  }
}
