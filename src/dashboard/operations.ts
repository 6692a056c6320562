// Actions of the pages: a message line that shows what happened (the API's errors as they come),
// and the platform's asynchronous operations (scale, restart: 202 + Location) followed until they end.
import { api } from './api.ts';
import { h } from './dom.ts';

export interface MessageLine {
  el: HTMLParagraphElement;
  say: (text: string, error?: boolean) => void;
}

export function messageLine(id: string): MessageLine {
  const el = h('p', { class: 'message', id, role: 'status' });
  return {
    el,
    say: (text, error = false) => {
      el.textContent = text;
      el.className = `message${error ? ' error' : ''}`;
    },
  };
}

/** Runs an action; its failure (the API's `{error}` or `{errors}`) is said on the line instead of thrown. */
export async function attempt<T>(line: MessageLine, label: string, action: () => Promise<T>): Promise<T | undefined> {
  try {
    return await action();
  } catch (err) {
    line.say(`${label}: ${(err as Error).message}`, true);
    return undefined;
  }
}

/** A call answering 202 with the operation in Location, followed until it is done or failed (2 minutes at most). */
export async function followOperation(line: MessageLine, label: string, call: () => Promise<{ headers: Headers }>) {
  await attempt(line, label, async () => {
    const res = await call();
    line.say(`${label}…`);
    const location = res.headers.get('location');
    for (let i = 0; location && i < 240; i++) {
      const op = (await api<{ operation: { status: string; error?: string } }>('GET', new URL(location).pathname)).body
        .operation;
      if (op.status === 'done') return line.say(`${label}: done`);
      if (op.status === 'error') return line.say(`${label}: ${op.error ?? 'failed'}`, true);
      await new Promise((r) => setTimeout(r, 500));
    }
  });
}

/** The app's restart through the API (what applies changed variables), followed to its end. */
export function restartApp(line: MessageLine, appPath: string, label = 'Restart'): Promise<void> {
  return followOperation(line, label, () => api('POST', `${appPath}/restart`, {}));
}
