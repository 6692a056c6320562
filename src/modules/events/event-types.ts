// Event types and categories of the platform's timeline. Names follow go-scalingo's event
// constants (events_struct.go) — see docs/fidelity.md. Each type belongs to one category.

// The first two are the platform's documented categories (ids included); the others are the
// emulator's, for types the documentation does not place (docs/fidelity.md).
export const EVENT_CATEGORIES = [
  { id: '5982f139d48c360021b1eb44', name: 'app_operations', display_name: 'App operations', position: 1 },
  { id: '5982f139d48c360021b1eb45', name: 'addons', display_name: 'Addons', position: 2 },
  { id: '6a0e1c00e3a1b2000e000003', name: 'collaborators', display_name: 'Collaborators', position: 3 },
  { id: '6a0e1c00e3a1b2000e000004', name: 'environment', display_name: 'Environment', position: 4 },
  { id: '6a0e1c00e3a1b2000e000005', name: 'monitoring', display_name: 'Monitoring', position: 5 },
  { id: '6a0e1c00e3a1b2000e000006', name: 'logs', display_name: 'Logs', position: 6 },
  { id: '6a0e1c00e3a1b2000e000007', name: 'account', display_name: 'Account', position: 7 },
] as const;

import { defined } from '../../shared/defined.ts';

export type EventCategoryName = (typeof EVENT_CATEGORIES)[number]['name'];

const t = (category: EventCategoryName, display_name: string, description: string) => ({
  category,
  display_name,
  description,
});

export const EVENT_TYPES = {
  new_app: t('app_operations', 'App created', 'An application was created'),
  edit_app: t('app_operations', 'App settings edited', 'Settings of the application were changed'),
  rename_app: t('app_operations', 'App renamed', 'The application was renamed'),
  transfer_app: t('app_operations', 'App transferred', 'The ownership of the application was transferred'),
  delete_app: t('app_operations', 'App deleted', 'The application was deleted'),
  create_review_app: t(
    'app_operations',
    'Child app created',
    'A child (review) application was created from this application',
  ),
  stack_changed: t('app_operations', 'Stack changed', 'The stack of the application was changed'),
  deployment: t('app_operations', 'Deployment', 'A deployment of the application ended'),
  restart: t('app_operations', 'Restart', 'Containers of the application were restarted'),
  scale: t('app_operations', 'Scale', 'The container formation was changed'),
  stop_app: t('app_operations', 'App stopped', 'All the containers of the application were stopped'),
  crash: t('app_operations', 'Crash', 'A container of the application crashed'),
  repeated_crash: t('app_operations', 'Repeated crash', 'The application crashed repeatedly and was stopped'),
  run: t('app_operations', 'One-off container', 'A one-off container was started'),
  new_variable: t('environment', 'Variable added', 'An environment variable was added'),
  edit_variable: t('environment', 'Variable edited', 'An environment variable was changed'),
  edit_variables: t('environment', 'Variables edited', 'Several environment variables were changed'),
  delete_variable: t('environment', 'Variable deleted', 'An environment variable was deleted'),
  new_collaborator: t('collaborators', 'Collaborator invited', 'A collaborator was invited'),
  accept_collaborator: t('collaborators', 'Collaborator accepted', 'A collaborator accepted the invitation'),
  delete_collaborator: t('collaborators', 'Collaborator removed', 'A collaborator was removed'),
  change_collaborator_role: t('collaborators', 'Collaborator role changed', 'A collaborator became limited or full'),
  new_domain: t('app_operations', 'Domain added', 'A custom domain was linked to the application'),
  edit_domain: t('app_operations', 'Domain edited', 'A custom domain was changed (certificate, canonical)'),
  delete_domain: t('app_operations', 'Domain removed', 'A custom domain was unlinked from the application'),
  new_autoscaler: t('app_operations', 'Autoscaler added', 'An autoscaler was created'),
  edit_autoscaler: t('app_operations', 'Autoscaler edited', 'An autoscaler was changed'),
  delete_autoscaler: t('app_operations', 'Autoscaler deleted', 'An autoscaler was deleted'),
  new_addon: t('addons', 'Addon added', 'An addon was provisioned'),
  delete_addon: t('addons', 'Addon removed', 'An addon was removed'),
  upgrade_addon: t('addons', 'Addon plan changed', 'The plan of an addon was changed'),
  addon_updated: t('addons', 'Addon updated', "An addon's status changed (type_data.status: [old, new])"),
  new_alert: t('monitoring', 'Alert added', 'An alert was created'),
  delete_alert: t('monitoring', 'Alert deleted', 'An alert was deleted'),
  alert: t('monitoring', 'Alert', 'An alert fired, reminded, or resolved (type_data.activated)'),
  new_notifier: t('monitoring', 'Notifier added', 'A notifier was created'),
  edit_notifier: t('monitoring', 'Notifier edited', 'A notifier was changed'),
  delete_notifier: t('monitoring', 'Notifier deleted', 'A notifier was deleted'),
  new_log_drain: t('logs', 'Log drain added', 'A log drain was added'),
  delete_log_drain: t('logs', 'Log drain removed', 'A log drain was removed'),
  new_addon_log_drain: t('logs', 'Addon log drain added', 'A log drain was added to an addon'),
  delete_addon_log_drain: t('logs', 'Addon log drain removed', 'A log drain was removed from an addon'),
  new_token: t('account', 'Token created', 'An API token was created'),
  new_project: t('account', 'Project created', 'A project was created'),
  edit_project: t('account', 'Project edited', 'A project was renamed or made the default one'),
  delete_project: t('account', 'Project deleted', 'A project was deleted'),
  update_app_project: t(
    'app_operations',
    'App moved to another project',
    'The application was moved to another project',
  ),
  delete_token: t('account', 'Token deleted', 'An API token was deleted'),
  new_key: t('account', 'SSH key added', 'An SSH public key was added to the account'),
  delete_key: t('account', 'SSH key removed', 'An SSH public key was removed from the account'),
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** The platform's own user (seeded by a migration): the author of events no person caused. */
export const PLATFORM_USER_ID = 'us-scalingo-platform';

export function eventTypesJson() {
  return Object.entries(EVENT_TYPES).map(([name, v]) => ({
    id: `et-${name}`,
    category_id: defined(
      EVENT_CATEGORIES.find((c) => c.name === v.category),
      `event category ${v.category}`,
    ).id,
    name,
    display_name: v.display_name,
    description: v.description,
  }));
}
