import { eventTypesJson } from '../events/event-types.ts';

// Notification platforms (GET /v1/notification_platforms, public). Ids of slack, webhook and email are the
// platform's own, as its documentation shows them (developers.scalingo.com notifiers and notification
// platforms pages); rocket_chat's was not found and is the emulator's (docs/fidelity.md).
export type PlatformName = 'email' | 'slack' | 'webhook' | 'rocket_chat';

export interface Platform {
  id: string;
  name: PlatformName;
  display_name: string;
  logo_url: string;
  description: string;
}

export const PLATFORMS: Platform[] = [
  {
    id: '59c52ac27651ce002c1d4620',
    name: 'email',
    display_name: 'E-mail',
    logo_url: '',
    description: 'Send events by e-mail (the emulator appends them to an outbox file)',
  },
  {
    id: '5982f145d48c3600273ef089',
    name: 'slack',
    display_name: 'Slack',
    logo_url: '',
    description: 'Send events to a Slack incoming webhook',
  },
  {
    id: '5982f145d48c3600273ef08a',
    name: 'webhook',
    display_name: 'Webhook',
    logo_url: '',
    description: 'POST the event JSON to a URL of yours',
  },
  {
    id: '6a0e1c00e3a1b2000e000010',
    name: 'rocket_chat',
    display_name: 'Rocket.Chat',
    logo_url: '',
    description: 'Send events to a Rocket.Chat incoming webhook',
  },
];

/** The platforms that deliver to `type_data.webhook_url`. */
export const WEBHOOK_PLATFORMS = new Set<PlatformName>(['slack', 'webhook', 'rocket_chat']);

export function platformJson(p: Platform) {
  return { ...p, available_event_ids: eventTypesJson().map((t) => t.id) };
}

export const platformById = (id: string) => PLATFORMS.find((p) => p.id === id);
export const platformByName = (name: string) => PLATFORMS.find((p) => p.name === name);
