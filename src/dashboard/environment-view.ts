// An app's environment (#/apps/<name>/environment): list, add, edit, delete through /v1 variables.
// As on the platform, a change reaches the containers at their next restart: the page says so and
// offers the API's restart (POST /v1/apps/:app/restart), followed to its end.
import { api } from './api.ts';
import { every, fill, h, refill, secretText } from './dom.ts';
import { attempt, messageLine, restartApp } from './operations.ts';

interface Variable {
  id: string;
  name: string;
  value: string;
}

// Names that usually hold credentials, and URLs carrying a password: their values are shown masked.
const SECRET_NAME = /(PASSWORD|PASSWD|SECRET|TOKEN|KEY|PRIVATE|CREDENTIAL|_DSN$)/i;
export function looksSecret(v: Pick<Variable, 'name' | 'value'>): boolean {
  if (SECRET_NAME.test(v.name)) return true;
  try {
    return Boolean(new URL(v.value).password);
  } catch {
    return false;
  }
}

export function showEnvironment(box: HTMLElement, name: string): void {
  const path = `/v1/apps/${encodeURIComponent(name)}`;
  const line = messageLine('env-message');
  const body = h('tbody');
  const pending = h('div', { class: 'pending', id: 'env-pending', hidden: true });
  const newName = h('input', { id: 'env-name', placeholder: 'NAME', autocomplete: 'off', 'aria-label': 'Name' });
  const newValue = h('input', { id: 'env-value', placeholder: 'value', autocomplete: 'off', 'aria-label': 'Value' });
  fill(
    box,
    h(
      'section',
      { class: 'card wide' },
      h('h2', {}, 'Environment'),
      pending,
      line.el,
      h(
        'table',
        { id: 'variables' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Value'), h('th', {}, ''))),
        body,
      ),
      h(
        'form',
        { class: 'row', id: 'env-add', onsubmit: (e: Event) => (e.preventDefault(), void add()) },
        newName,
        newValue,
        h('button', { type: 'submit', id: 'env-add-button' }, 'Add'),
      ),
    ),
  );

  let changed = 0;
  function noteChange(what: string) {
    changed++;
    line.say(what);
    fill(
      pending,
      `${changed} change${changed > 1 ? 's' : ''} not applied yet: the containers get them at their next restart. `,
      h('button', { id: 'env-apply', onclick: () => void apply() }, 'Restart to apply'),
    );
    pending.hidden = false;
  }
  async function apply() {
    await restartApp(line, path, 'Restart to apply the environment');
    if (line.el.classList.contains('error')) return;
    changed = 0;
    pending.hidden = true;
  }

  async function add() {
    const variable = { name: newName.value.trim(), value: newValue.value };
    const done = await attempt(line, `Add ${variable.name || 'variable'}`, () =>
      api('POST', `${path}/variables`, { variable }),
    );
    if (!done) return;
    newName.value = '';
    newValue.value = '';
    noteChange(`${variable.name} set`);
    await refresh(true);
  }
  async function edit(v: Variable, value: string) {
    const done = await attempt(line, `Edit ${v.name}`, () =>
      api('PATCH', `${path}/variables/${v.id}`, { variable: { value } }),
    );
    if (!done) return;
    noteChange(`${v.name} changed`);
    await refresh(true);
  }
  async function remove(v: Variable) {
    if (!confirm(`Delete ${v.name}?`)) return;
    const done = await attempt(line, `Delete ${v.name}`, () => api('DELETE', `${path}/variables/${v.id}`));
    if (!done) return;
    noteChange(`${v.name} deleted`);
    await refresh(true);
  }

  function row(v: Variable) {
    const value = h(
      'td',
      {},
      looksSecret(v)
        ? secretText(`env-value-${v.name}`, v.value, '••••••••')
        : h('code', { id: `env-value-${v.name}` }, v.value),
    );
    const editButton = h('button', { class: 'small secondary', 'data-edit': v.name }, 'Edit');
    editButton.addEventListener('click', () => {
      const input = h('input', { value: v.value, 'aria-label': `${v.name} value`, 'data-editing': v.name });
      fill(
        value,
        h(
          'form',
          { class: 'row', onsubmit: (e: Event) => (e.preventDefault(), void edit(v, input.value)) },
          input,
          h('button', { type: 'submit', class: 'small' }, 'Save'),
        ),
      );
      input.focus();
    });
    return h(
      'tr',
      { 'data-variable': v.name },
      h('td', {}, h('code', {}, v.name)),
      value,
      h(
        'td',
        { class: 'actions' },
        editButton,
        h('button', { class: 'small danger', 'data-delete': v.name, onclick: () => void remove(v) }, 'Delete'),
      ),
    );
  }

  /** `saved`: after a change this page made, whose form may go (else a value being edited keeps its input). */
  async function refresh(saved = false) {
    const { variables } = (await api<{ variables: Variable[] }>('GET', `${path}/variables`)).body;
    variables.sort((a, b) => a.name.localeCompare(b.name));
    if (!saved && body.querySelector('[data-editing]')) return;
    refill(body, variables, () => variables.map(row));
  }
  every(5000, () => refresh().catch((err: Error) => line.say(`Environment: ${err.message}`, true)));
}
