import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type Clock, isoDate } from '../../shared/clock.ts';
import { type Logger } from '../../shared/logger.ts';
import { basicAuthFromUrl, redactUrl } from '../../shared/redact.ts';
import { type UserRow } from '../auth/principal.ts';
import { type NotifierRow } from './notifiers.store.ts';

/** An event as the platform sends it to webhooks (developers.scalingo.com notifiers: "Data Sent to the Webhook Endpoint"). */
export interface EventPayload {
  id: string;
  created_at: string | null;
  user: { username: string; email: string; id: string } | null;
  app_id: string | null;
  app_name: string | null;
  type: string;
  type_data: Record<string, unknown>;
}

export interface DeliveryDeps {
  logger: Logger;
  clock: Clock;
  /** `<dataDir>/outbox/emails.log` (a temp dir with --in-memory). */
  outboxFile: string;
  timeoutMs: number;
  retries: number;
  backoffMs: number;
  userById: (id: string) => UserRow | undefined;
  fetch?: typeof fetch;
}

/**
 * Sends notifications without ever blocking the caller: webhooks are POSTed in the background with
 * retries (network error, 429, 5xx) and doubling back-off; e-mails are appended, one JSON per line,
 * to the outbox file. stop() aborts what is in flight and cancels pending retries.
 */
export function createDelivery(deps: DeliveryDeps) {
  const doFetch = deps.fetch ?? fetch;
  const inFlight = new Set<AbortController>();
  const timers = new Set<NodeJS.Timeout>();
  let outbox: Promise<void> = Promise.resolve();
  let stopped = false;

  async function post(url: string, body: unknown, attempt: number): Promise<void> {
    if (stopped) return;
    const ctl = new AbortController();
    inFlight.add(ctl);
    const timeout = setTimeout(() => ctl.abort(), deps.timeoutMs);
    let retry = false;
    // Credentials in the URL go as HTTP basic auth (fetch cannot send a URL that carries them), and
    // only the redacted form is ever logged.
    const shown = redactUrl(url);
    try {
      const target = basicAuthFromUrl(url);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'scalingo-emulator-notifier',
      };
      if (target.authorization) headers.authorization = target.authorization;
      const res = await doFetch(target.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: ctl.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      retry = res.status === 429 || res.status >= 500;
      if (!res.ok) deps.logger.warn({ url: shown, status: res.status, attempt }, 'webhook notification refused');
    } catch (err) {
      // A URL that cannot be requested at all will not work on a retry either.
      retry = !(err instanceof TypeError && /Invalid URL|cannot be constructed|credentials/i.test(err.message));
      if (!stopped)
        deps.logger.warn(
          { url: shown, attempt, err: (err as Error).message.split(url).join(shown) },
          'webhook notification failed',
        );
    } finally {
      clearTimeout(timeout);
      inFlight.delete(ctl);
    }
    if (retry && attempt < deps.retries && !stopped) {
      const t = setTimeout(
        () => {
          timers.delete(t);
          void post(url, body, attempt + 1);
        },
        deps.backoffMs * 2 ** attempt,
      );
      timers.add(t);
    }
  }

  function email(n: NotifierRow, event: EventPayload): void {
    const data = JSON.parse(n.type_data) as { emails?: string[]; user_ids?: string[] };
    const to = new Set(data.emails ?? []);
    for (const id of data.user_ids ?? []) {
      const u = deps.userById(id);
      if (u) to.add(u.email);
    }
    const line = `${JSON.stringify({ time: isoDate(deps.clock.now()), notifier_id: n.id, to: [...to], subject: subjectOf(event), event })}\n`;
    // Writes are chained so lines never interleave.
    outbox = outbox
      .then(() => mkdir(dirname(deps.outboxFile), { recursive: true }))
      .then(() => appendFile(deps.outboxFile, line))
      .catch((err: unknown) => deps.logger.error({ err }, 'could not write the e-mail outbox'));
  }

  return {
    outboxFile: deps.outboxFile,
    deliver(n: NotifierRow, event: EventPayload): void {
      if (stopped) return;
      if (n.platform === 'email') return email(n, event);
      const url = (JSON.parse(n.type_data) as { webhook_url?: string }).webhook_url;
      if (!url) return;
      // Slack-like platforms take a message; a plain webhook gets the event JSON itself.
      const body = n.platform === 'webhook' ? event : { text: subjectOf(event) };
      void post(url, body, 0);
    },
    /** Resolves once every queued outbox line is written (tests, stop). */
    drain: () => outbox,
    async stop(): Promise<void> {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const c of inFlight) c.abort();
      await outbox;
    },
  };
}

function subjectOf(e: EventPayload): string {
  const app = e.app_name ? `[${e.app_name}] ` : '';
  if (e.type === 'alert') {
    const d = e.type_data as {
      metric?: string;
      sender_name?: string;
      activated?: boolean;
      value_text?: string;
      limit_text?: string;
      send_when_below?: boolean;
    };
    const dir = d.send_when_below ? 'Low' : 'High';
    return `${app}${dir} ${d.metric} on ${d.sender_name} ${d.activated ? 'triggered' : 'resolved'} (value: ${d.value_text}, limit: ${d.limit_text})`;
  }
  return `${app}${e.type}`;
}

export type Delivery = ReturnType<typeof createDelivery>;
