// An app's addons (#/apps/<name>/addons): one card each (addon-card.ts), refreshed every few seconds.

import { type Addon, addonCard } from './addon-card.ts';
import { api } from './api.ts';
import { every, fill, h } from './dom.ts';
import { messageLine } from './operations.ts';

export function showAddons(box: HTMLElement, name: string): void {
  const path = `/v1/apps/${encodeURIComponent(name)}`;
  const line = messageLine('addons-message');
  const list = h('div', { id: 'addons', class: 'grid' });
  const empty = h('p', { class: 'muted' });
  fill(box, line.el, empty, list);
  const cards = new Map<string, ReturnType<typeof addonCard>>();

  every(3000, async () => {
    const [addons, variables] = await Promise.all([
      api<{ addons: Addon[] }>('GET', `${path}/addons`).then((r) => r.body.addons),
      // A Limited Collaborator may not read variables (403): the addons show without their URL.
      api<{ variables: { name: string; value: string }[] }>('GET', `${path}/variables`).then(
        (r) => Object.fromEntries(r.body.variables.map((v) => [v.name, v.value])),
        () => ({}),
      ),
    ]);
    for (const [id, card] of cards)
      if (!addons.some((a) => a.id === id)) {
        card.el.remove();
        cards.delete(id);
      }
    await Promise.all(
      addons.map((a) => {
        let card = cards.get(a.id);
        if (!card) {
          card = addonCard(path, name, a, line);
          cards.set(a.id, card);
          list.append(card.el);
        }
        return card
          .update(a, variables)
          .catch((err: Error) => line.say(`${a.addon_provider.name}: ${err.message}`, true));
      }),
    );
    empty.textContent = addons.length
      ? ''
      : 'No addons. Provision one with `scalingo addons-add` or POST /v1/apps/:app/addons.';
  });
}
