import { PLATFORM_USER_ID } from '../events/event-types.ts';
import { type EventsService } from '../events/events.service.ts';
import { findPlan, findProvider } from './addons.catalog.ts';
import { type AddonsStore } from './addons.store.ts';

// An addon's status as its server changes it (provisioning → running, running → provisioning
// during an outage, → error): the row, and the timeline event the platform records for it,
// `addon_updated` with `status: [old, new]` (go-scalingo EventAddonUpdatedTypeData).

export interface AddonStatusDeps {
  store: AddonsStore;
  events: EventsService;
  appOf: (appId: string) => { id: string; name: string } | undefined;
}

export function addonStatusSetter(deps: AddonStatusDeps) {
  return (addonId: string, status: string): void => {
    const addon = deps.store.byId(addonId);
    if (!addon || addon.status === status) return;
    deps.store.setStatus(addonId, status);
    const provider = findProvider(addon.provider_id);
    deps.events.record({
      type: 'addon_updated',
      app: deps.appOf(addon.app_id),
      user: { id: PLATFORM_USER_ID },
      typeData: {
        addon_id: addon.id,
        addon_plan_name: (provider && findPlan(provider, addon.plan_id)?.name) ?? addon.plan_id,
        addon_resource_id: addon.resource_id,
        addon_provider_id: addon.provider_id,
        addon_provider_name: provider?.name ?? addon.provider_id,
        status: [addon.status, status],
        attributes_changed: ['status'],
      },
    });
  };
}
