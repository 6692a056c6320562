// A terminal into a one-off container (#/apps/<name>/terminal): `scalingo run <command>` in the
// browser. POST /v1/apps/:app/run (attached), then a WebSocket on the attach URL it answers
// (src/modules/one-off/attach-server.ts): output in binary frames, keystrokes sent as binary frames,
// `{"type":"resize"}` when the terminal's size changes, `{"type":"exit","exit_code":N}` at the end.
// Leaving the page or closing the tab closes the socket, and the emulator stops the one-off then.

import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { api, socketUrl } from './api.ts';
import { fill, h, onLeave } from './dom.ts';
import { attempt, messageLine } from './operations.ts';

export function showTerminal(box: HTMLElement, name: string): void {
  const path = `/v1/apps/${encodeURIComponent(name)}`;
  const line = messageLine('terminal-message');
  const command = h('input', { id: 'terminal-command', value: 'bash', 'aria-label': 'Command', autocomplete: 'off' });
  const run = h('button', { type: 'submit', id: 'terminal-run' }, 'Run');
  const state = h('span', { class: 'muted', id: 'terminal-state' }, 'not started');
  const screen = h('div', { class: 'terminal', id: 'terminal' });
  fill(
    box,
    h(
      'section',
      { class: 'card wide' },
      h('h2', {}, 'Terminal ', state),
      h(
        'form',
        { class: 'row', onsubmit: (e: Event) => (e.preventDefault(), void start()) },
        h('span', { class: 'label' }, 'scalingo run'),
        command,
        run,
      ),
      line.el,
      screen,
    ),
  );

  let session: { ws: WebSocket; term: Terminal; refit: () => void } | null = null;
  const end = () => {
    if (!session) return;
    session.ws.close();
    session.term.dispose();
    window.removeEventListener('resize', session.refit);
    session = null;
  };
  onLeave(end);

  async function start() {
    end();
    const started = await attempt(line, 'Run', () =>
      api<{ attach_url: string; container: { label: string } }>('POST', `${path}/run`, {
        command: command.value,
        detached: false,
      }),
    );
    if (!started) return;
    line.say('');
    const term = new Terminal({ convertEol: false, cursorBlink: true, fontSize: 14, scrollback: 2000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(screen);
    fit.fit();
    const ws = new WebSocket(socketUrl(started.body.attach_url));
    ws.binaryType = 'arraybuffer';
    const refit = () => fit.fit();
    window.addEventListener('resize', refit);
    session = { ws, term, refit };
    run.disabled = true;
    state.textContent = `${started.body.container.label}: connecting…`;
    delete state.dataset.exitCode;
    const encoder = new TextEncoder();
    const resize = () => {
      screen.dataset.size = `${term.rows} ${term.cols}`; // as `stty size` prints it in the container
      if (ws.readyState === WebSocket.OPEN)
        ws.send(JSON.stringify({ type: 'resize', width: term.cols, height: term.rows }));
    };
    ws.onopen = () => {
      state.textContent = `${started.body.container.label}: attached`;
      resize();
      term.focus();
    };
    ws.onmessage = (m) => {
      if (typeof m.data !== 'string') return term.write(new Uint8Array(m.data as ArrayBuffer));
      const msg = JSON.parse(m.data) as { type?: string; exit_code?: number };
      if (msg.type === 'exit') {
        state.dataset.exitCode = String(msg.exit_code);
        state.textContent = `${started.body.container.label}: exited with code ${msg.exit_code}`;
      }
    };
    ws.onclose = (e) => {
      run.disabled = false;
      if (state.dataset.exitCode === undefined)
        state.textContent = `${started.body.container.label}: closed${e.reason ? ` (${e.reason})` : ''}`;
      term.options.cursorBlink = false;
    };
    term.onData((data) => ws.readyState === WebSocket.OPEN && ws.send(encoder.encode(data)));
    term.onResize(resize);
  }
}
