// An app's page: its name, the tabs (#/apps/<name>/<tab>) and the view of the tab picked.

import { showAddons } from './addons-view.ts';
import { showApp } from './app-view.ts';
import { showDeployments } from './deployments-view.ts';
import { fill, h } from './dom.ts';
import { showEnvironment } from './environment-view.ts';
import { showSettings } from './settings-view.ts';
import { showTerminal } from './terminal-view.ts';

const TABS: [string, string, (box: HTMLElement, name: string) => void][] = [
  ['overview', 'Overview', showApp],
  ['addons', 'Addons', showAddons],
  ['environment', 'Environment', showEnvironment],
  ['deployments', 'Deployments', showDeployments],
  ['terminal', 'Terminal', showTerminal],
  ['settings', 'Settings', showSettings],
];

export function showAppPage(main: HTMLElement, name: string, tab: string): void {
  const picked = TABS.find(([id]) => id === tab) ?? TABS[0];
  const base = `#/apps/${encodeURIComponent(name)}`;
  const box = h('div', { id: `tab-${picked[0]}` });
  fill(
    main,
    h('h1', {}, name),
    h(
      'nav',
      { class: 'tabs' },
      ...TABS.map(([id, label]) =>
        h(
          'a',
          {
            href: id === 'overview' ? base : `${base}/${id}`,
            id: `tab-link-${id}`,
            class: id === picked[0] ? 'tab active' : 'tab',
          },
          label,
        ),
      ),
    ),
    box,
  );
  picked[2](box, name);
}
