// The dashboard's entry: credentials first (src/dashboard/api.ts), then a hash router between
// the apps list (#/) and an app's page (#/apps/<name>[/<tab>]).
import {
  ApiFailure,
  adminToken,
  forgetAdminToken,
  openSession,
  sessionUser,
  sessionUsers,
  setAdminToken,
} from './api.ts';
import { showAppPage } from './app-page.ts';
import { showApps } from './apps-view.ts';
import { byId, fill, h, leavePage } from './dom.ts';

const main = byId('main');
const crumbs = byId('crumbs');
const picker = document.getElementById('user-picker') as HTMLSelectElement;

function askForToken(problem?: string): void {
  leavePage();
  const input = h('input', { type: 'password', id: 'admin-token', placeholder: 'admin token', autocomplete: 'off' });
  fill(
    main,
    h(
      'div',
      { class: 'card login' },
      h('h1', {}, 'Sign in to the emulator'),
      h(
        'p',
        {},
        'Open the dashboard link printed when the emulator starts (it carries the admin token), or paste the admin token here.',
      ),
      problem ? h('p', { class: 'message error' }, problem) : null,
      input,
      h(
        'button',
        {
          onclick: () => {
            setAdminToken(input.value);
            void start();
          },
        },
        'Open the dashboard',
      ),
    ),
  );
}

function showUsers(): void {
  const me = sessionUser();
  fill(
    picker,
    ...sessionUsers().map((u) =>
      h('option', { value: u.username, selected: u.username === me?.username }, `${u.username} <${u.email}>`),
    ),
  );
}

picker.addEventListener('change', () => {
  void openSession(picker.value).then(route, fail);
});

function route(): void {
  leavePage();
  const m = /^#\/apps\/([^/]+)(?:\/([a-z]+))?/.exec(location.hash);
  if (m) {
    const name = decodeURIComponent(m[1]);
    fill(crumbs, h('a', { href: '#/' }, 'Apps'), ' / ', name);
    showAppPage(main, name, m[2] ?? 'overview');
  } else {
    fill(crumbs, 'Apps');
    showApps(main);
  }
}

function fail(err: unknown): void {
  if (err instanceof ApiFailure && (err.status === 401 || err.status === 403)) {
    forgetAdminToken();
    askForToken(`The admin token was refused (${err.message}).`);
  } else {
    fill(main, h('p', { class: 'message error' }, `The emulator does not answer: ${(err as Error).message}`));
  }
}

async function start(): Promise<void> {
  if (!adminToken()) return askForToken();
  try {
    await openSession();
  } catch (err) {
    return fail(err);
  }
  showUsers();
  route();
}

window.addEventListener('hashchange', route);
void start();
