// One addon on the addons page: status and plan (change, remove, with confirmation), how to connect
// from the host (URL and the client's command line, masked, with copy), backups (list, make, restore:
// the database API with the addon's own token, as the CLI's `backups` commands) and the server's output.

import { addonKind, clientCommand, hostUrl, urlVariable } from './addon-access.ts';
import { ApiFailure, api, databaseApi } from './api.ts';
import { ago, badge, fill, h, maskUrl, refill, secretText } from './dom.ts';
import { attempt, type MessageLine } from './operations.ts';

export interface Addon {
  id: string;
  status: string;
  status_message?: string;
  addon_provider: { id: string; name: string };
  plan: { id: string; name: string; display_name?: string };
}
interface Backup {
  id: string;
  created_at: string;
  name: string;
  size: number;
  status: string;
}
interface Server {
  running: boolean;
  host: string | null;
  port: number | null;
}

export function addonCard(appPath: string, appName: string, first: Addon, line: MessageLine) {
  const kind = addonKind(first.addon_provider.id);
  const addonPath = `${appPath}/addons/${first.id}`;
  const status = h('span');
  const plan = h('span', { class: 'muted' });
  const planPicker = h('select', { id: `plan-${kind}`, 'aria-label': `${kind} plan` });
  const connection = h('div', { class: 'connection', id: `connection-${kind}` });
  const backupsBody = h('tbody');
  const logs = h('pre', { class: 'logs short', id: `addon-logs-${kind}` });
  let token: string | null = null;
  let plansLoaded = false;

  const db = async <T>(method: string, path: string): Promise<T> => {
    token ??= (await api<{ addon: { token: string } }>('POST', `${addonPath}/token`)).body.addon.token;
    try {
      return (await databaseApi<T>(token, method, `/databases/${first.id}${path}`)).body;
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 401) token = null;
      throw err;
    }
  };

  const el = h(
    'section',
    { class: 'card wide addon', 'data-addon': kind },
    h('h2', {}, first.addon_provider.name, ' ', status, ' ', plan),
    h(
      'div',
      { class: 'row' },
      planPicker,
      h('button', { class: 'secondary', id: `change-plan-${kind}`, onclick: () => void changePlan() }, 'Change plan'),
      h('button', { class: 'danger', id: `remove-${kind}`, onclick: () => void remove() }, 'Remove'),
    ),
    h('h3', {}, 'Connect from this machine'),
    connection,
    h(
      'h3',
      {},
      'Backups ',
      h('button', { class: 'small', id: `backup-${kind}`, onclick: () => void backUp() }, 'Back up now'),
    ),
    h(
      'table',
      { id: `backups-${kind}` },
      h('thead', {}, h('tr', {}, h('th', {}, 'Backup'), h('th', {}, 'Status'), h('th', {}, 'Made'), h('th', {}, ''))),
      backupsBody,
    ),
    h('h3', {}, "The server's output"),
    logs,
  );

  async function changePlan() {
    const chosen = planPicker.value;
    if (!chosen || !confirm(`Change the plan of ${first.addon_provider.name} to ${chosen}?`)) return;
    const done = await attempt(line, 'Change plan', () => api('PATCH', addonPath, { addon: { plan_id: chosen } }));
    if (done) line.say(`${first.addon_provider.name}: plan changed to ${chosen}`);
  }

  async function remove() {
    if (!confirm(`Remove ${first.addon_provider.name} from ${appName}? Its data is deleted.`)) return;
    const done = await attempt(line, 'Remove', () => api('DELETE', addonPath));
    if (done) line.say(`${first.addon_provider.name} removed`);
  }

  async function backUp() {
    const made = await attempt(line, 'Backup', () =>
      db<{ database_backup: Backup }>('POST', '/backups').then((b) => b.database_backup),
    );
    if (made) line.say(`Backup ${made.id} started`);
  }

  async function restore(backup: Backup) {
    if (
      !confirm(`Restore the backup of ${new Date(backup.created_at).toLocaleString()}? The current data is replaced.`)
    )
      return;
    await attempt(line, 'Restore', async () => {
      let r = (
        await db<{ restore: { id: string; status: string; error: string } }>('POST', `/backups/${backup.id}/restore`)
      ).restore;
      line.say(`Restoring ${backup.id}…`);
      for (let i = 0; r.status === 'running' && i < 600; i++) {
        await new Promise((ok) => setTimeout(ok, 1000));
        r = (await db<{ restore: typeof r }>('GET', `/restores/${r.id}`)).restore;
      }
      line.say(
        r.status === 'done' ? `Restore of ${backup.id}: done` : `Restore of ${backup.id}: ${r.error || r.status}`,
        r.status !== 'done',
      );
    });
  }

  async function loadPlans(current: string) {
    if (plansLoaded) return;
    const { plans } = (
      await api<{ plans: Addon['plan'][] }>('GET', `/v1/addon_providers/${first.addon_provider.id}/plans`)
    ).body;
    plansLoaded = true;
    fill(
      planPicker,
      ...plans.map((p) => h('option', { value: p.id, selected: p.id === current }, p.display_name ?? p.name)),
    );
  }

  function showConnection(a: Addon, variables: Record<string, string>, server: Server | 'stand-in' | null) {
    const variable = urlVariable(kind);
    const inApp = variables[variable];
    const published = server !== 'stand-in' && server?.host && server.port ? server : null;
    const url = inApp && published?.host && published.port ? hostUrl(inApp, published.host, published.port) : null;
    refill(connection, { url, status: a.status, inApp: Boolean(inApp), standIn: server === 'stand-in' }, () => {
      if (server === 'stand-in')
        return [h('p', { class: 'muted' }, 'A stand-in: no database server runs for this addon in the emulator.')];
      if (!url)
        return [
          h(
            'p',
            { class: 'muted' },
            a.status === 'running'
              ? `No port on this machine: scalingo --app ${appName} db-tunnel ${variable}`
              : `Reachable once the server runs (${a.status_message ?? a.status}).`,
          ),
        ];
      const command = clientCommand(kind, url);
      return [
        h(
          'div',
          { class: 'row' },
          h('span', { class: 'label' }, 'URL'),
          secretText(`addon-url-${kind}`, url, maskUrl(url)),
        ),
        command
          ? h(
              'div',
              { class: 'row' },
              h('span', { class: 'label' }, 'Shell'),
              secretText(`addon-command-${kind}`, command, clientCommand(kind, url, true) ?? ''),
            )
          : null,
        h('p', { class: 'muted' }, `In the app's containers: $${variable} (the addon's address on the app's network).`),
      ];
    });
  }

  async function update(a: Addon, variables: Record<string, string>) {
    fill(status, badge(a.status));
    plan.textContent = a.plan.display_name ?? a.plan.name;
    await loadPlans(a.plan.id);
    // A stand-in addon runs no server (400): no port, no backups, no output.
    const server = await api<{ server: Server }>('GET', `${addonPath}/server`).then(
      (r) => r.body.server,
      (err: Error) => (err instanceof ApiFailure && err.status === 400 ? 'stand-in' : null),
    );
    showConnection(a, variables, server);
    if (server === 'stand-in' || !server?.running) return;
    // While a restore runs the database API answers 503: the last list stays on screen meanwhile.
    const [backups, output] = await Promise.all([
      db<{ database_backups: Backup[] }>('GET', '/backups').then(
        (b) => b.database_backups,
        () => null,
      ),
      api<string>('GET', `${addonPath}/server/logs?n=200`).then((r) => r.body),
    ]);
    if (backups) showBackups(backups);
    if (logs.textContent !== output) {
      const stick = logs.scrollTop + logs.clientHeight >= logs.scrollHeight - 4;
      logs.textContent = output;
      if (stick) logs.scrollTop = logs.scrollHeight;
    }
  }

  function showBackups(backups: Backup[]) {
    refill(backupsBody, backups, () =>
      backups.map((b) =>
        h(
          'tr',
          { 'data-backup': b.id },
          h('td', {}, b.name || b.id),
          h('td', {}, badge(b.status)),
          h('td', {}, ago(b.created_at)),
          h(
            'td',
            {},
            b.status === 'done'
              ? h(
                  'button',
                  { class: 'small secondary', 'data-restore': b.id, onclick: () => void restore(b) },
                  'Restore',
                )
              : null,
          ),
        ),
      ),
    );
  }

  return { el, update };
}
