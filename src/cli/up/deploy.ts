// One deployment of the folder, the way `scalingo deploy` makes it: the code archived, uploaded to a
// source (POST /v1/sources, PUT), deployed from its URL, and followed until it ends, its build
// output passed on line by line.
import { type ApiClient, callSignal, retryConflicts } from './api-client.ts';
import { archiveFolder } from './archive.ts';

const FINISHED = new Set(['success', 'build-error', 'crashed-error', 'timeout-error', 'aborted', 'hook-error']);
const POLL_MS = 300;

export interface DeploymentResult {
  id: string;
  status: string;
  /** Seconds from the archive to the end. */
  seconds: number;
  /** The output's last error line ("!      …"), when it failed. */
  reason?: string;
}

export async function deployFolder(
  api: ApiClient,
  app: string,
  dir: string,
  onLine: (line: string) => void,
): Promise<DeploymentResult> {
  const t0 = performance.now();
  api.signal?.throwIfAborted();
  const archive = await archiveFolder(dir);
  let id: string;
  try {
    const { source } = await api.send<{ source: { upload_url: string; download_url: string } }>('POST', '/v1/sources');
    await api.upload(source.upload_url, archive.file, archive.size);
    // A 409: the previous deployment is still cleaning up.
    ({
      deployment: { id },
    } = await retryConflicts(() =>
      api.send<{ deployment: { id: string } }>('POST', `/v1/apps/${app}/deployments`, {
        deployment: { source_url: source.download_url },
      }),
    ));
  } finally {
    await archive.cleanup();
  }
  let printed = 0;
  let pending = '';
  const flush = (output: string, all: boolean) => {
    pending += output.slice(printed);
    printed = output.length;
    const lines = pending.split('\n');
    pending = all ? '' : (lines.pop() ?? '');
    for (const l of all ? lines.filter((x, i) => x || i < lines.length - 1) : lines) onLine(l);
  };
  for (;;) {
    const { deployment } = await api.get<{ deployment: { status: string } }>(`/v1/apps/${app}/deployments/${id}`);
    const output = await outputOf(api, app, id);
    const done = FINISHED.has(deployment.status);
    flush(output, done);
    if (done) {
      const reason =
        deployment.status === 'success'
          ? undefined
          : output
              .split('\n')
              .filter((l) => l.startsWith('!'))
              .pop()
              ?.replace(/^!\s*/, '');
      return { id, status: deployment.status, seconds: (performance.now() - t0) / 1000, reason };
    }
    api.signal?.throwIfAborted();
    await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
}

async function outputOf(api: ApiClient, app: string, id: string): Promise<string> {
  const res = await fetch(`${api.apiUrl}/v1/apps/${app}/deployments/${id}/output`, {
    headers: api.headers,
    signal: callSignal(30_000, api.signal),
  });
  return res.ok ? res.text() : '';
}
