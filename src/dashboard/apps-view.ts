// The list of apps with their status, refreshed every few seconds.
import { api } from './api.ts';
import { ago, badge, every, fill, h } from './dom.ts';

interface App {
  id: string;
  name: string;
  status: string;
  owner: { username: string };
  url: string;
  last_deployed_at: string | null;
  created_at: string;
}

export function showApps(main: HTMLElement): void {
  const body = h('tbody');
  const empty = h('p', { class: 'muted' });
  fill(
    main,
    h('h1', {}, 'Apps'),
    h(
      'div',
      { class: 'card wide' },
      h(
        'table',
        { id: 'apps' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'Name'),
            h('th', {}, 'Status'),
            h('th', {}, 'Owner'),
            h('th', {}, 'URL'),
            h('th', {}, 'Last deployed'),
          ),
        ),
        body,
      ),
      empty,
    ),
  );
  every(3000, async () => {
    const { body: res } = await api<{ apps: App[] }>('GET', '/v1/apps');
    // The list has no status (as on the platform): each app's own page gives it.
    const statuses = await Promise.all(
      res.apps.slice(0, 100).map((a) =>
        api<{ app: App }>('GET', `/v1/apps/${encodeURIComponent(a.name)}`).then(
          (r) => r.body.app.status,
          () => 'unknown',
        ),
      ),
    );
    fill(
      body,
      ...res.apps.map((a, i) =>
        h(
          'tr',
          {
            class: 'clickable',
            'data-app': a.name,
            onclick: () => (location.hash = `#/apps/${encodeURIComponent(a.name)}`),
          },
          h('td', {}, h('a', { href: `#/apps/${encodeURIComponent(a.name)}` }, a.name)),
          h('td', {}, badge(statuses[i] ?? 'unknown')),
          h('td', {}, a.owner?.username ?? ''),
          h(
            'td',
            {},
            h(
              'a',
              { href: a.url, target: '_blank', rel: 'noopener noreferrer', onclick: (e: Event) => e.stopPropagation() },
              a.url,
            ),
          ),
          h('td', {}, ago(a.last_deployed_at)),
        ),
      ),
    );
    empty.textContent = res.apps.length
      ? ''
      : 'No apps yet for this user. Create one with the API (POST /v1/apps) or bind a directory in emulator.config.json.';
  });
}
