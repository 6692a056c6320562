// Deployments driven through the API of an emulator process (../emulator-process.ts): create an app,
// post a deployment, wait for it to end, read its output.
import { randomBytes } from 'node:crypto';
import { type EmulatorProcess, poll } from '../emulator-process.ts';

export const FINAL_STATUSES = ['build-error', 'crashed-error', 'success', 'timeout-error', 'aborted', 'hook-error'];

export interface EndedDeployment {
  id: string;
  status: string;
  output: string;
}

export async function createApp(emu: EmulatorProcess, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const r = await emu.call('POST', '/v1/apps', { body: { app: { name } } });
  if (r.status !== 201) throw new Error(`creating app ${name} answered ${r.status}: ${r.text}`);
  return name;
}

export async function deleteApp(emu: EmulatorProcess, app: string): Promise<void> {
  const r = await emu.call('DELETE', `/v1/apps/${app}?current_name=${app}`);
  if (r.status !== 204) throw new Error(`deleting app ${app} answered ${r.status}: ${r.text}`);
}

/** Posts a deployment of `sourceUrl`: its id (the answer must be 201). */
export async function postDeployment(emu: EmulatorProcess, app: string, sourceUrl: string): Promise<string> {
  const r = await emu.call('POST', `/v1/apps/${app}/deployments`, { body: { deployment: { source_url: sourceUrl } } });
  if (r.status !== 201) throw new Error(`POST deployment of ${app} answered ${r.status}: ${r.text}`);
  return r.body.deployment.id as string;
}

/** Waits for a deployment to reach a final status: its status and build output. */
export async function waitForDeployment(
  emu: EmulatorProcess,
  app: string,
  id: string,
  timeoutMs = 120_000,
): Promise<EndedDeployment> {
  const done = await poll(
    async () => {
      const r = await emu.call('GET', `/v1/apps/${app}/deployments/${id}`);
      return FINAL_STATUSES.includes(r.body?.deployment?.status) ? r.body.deployment : null;
    },
    `deployment ${id} of ${app} to end`,
    timeoutMs,
    250,
  );
  const output = (await emu.call('GET', `/v1/apps/${app}/deployments/${id}/output`)).text;
  return { id, status: done.status, output };
}
