import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { docker, removeByLabel } from '../support/docker-cli.ts';

// A build's labels reach the image in one LABEL step (the API's `labels` option costs a step per label).
const instance = `bl-${randomBytes(4).toString('hex')}`;
const runtime = createDockerRuntime();
const dir = mkdtempSync(join(tmpdir(), 'emu-build-labels-'));
const tags: string[] = [];

afterAll(async () => {
  for (const t of tags) await runtime.removeImage(t);
  await runtime.close();
  removeByLabel(`${LABELS.instance}=${instance}`);
  rmSync(dir, { recursive: true, force: true });
});

const labelsOf = (tag: string) =>
  JSON.parse(docker('image', 'inspect', '-f', '{{json .Config.Labels}}', tag)) as Record<string, string>;
/** The image's history lines (newest first) that its base image has not. */
const ownSteps = (tag: string) => {
  const history = (t: string) => docker('history', '--no-trunc', '--format', '{{.CreatedBy}}', t).split('\n');
  const base = history(DEFAULT_STACK_IMAGE).length;
  const all = history(tag);
  return all.slice(0, all.length - base);
};

describe('build labels (real engine)', () => {
  it("the context's own Dockerfile: its labels in one step, its CMD kept", async () => {
    writeFileSync(join(dir, 'Dockerfile'), `FROM ${DEFAULT_STACK_IMAGE}\nCMD ["echo", "${instance}"]`);
    const tag = `scalingo-emulator/bl-${instance}:own`;
    tags.push(tag);
    const labels = {
      [LABELS.managed]: '1',
      [LABELS.instance]: instance,
      [LABELS.appId]: 'app-1',
      [LABELS.deploymentId]: 'dep-1',
    };
    await runtime.buildImage({ contextDir: dir, tag, labels });
    expect(labelsOf(tag)).toMatchObject(labels);
    const steps = ownSteps(tag);
    expect(steps.filter((s) => s.includes('LABEL'))).toHaveLength(1);
    expect(steps.some((s) => s.includes('CMD') && s.includes(instance))).toBe(true);
    expect(docker('run', '--rm', '--label', `${LABELS.instance}=${instance}`, tag)).toBe(instance);
  });

  it('a label the Dockerfile would expand is passed as the API option: its value arrives as given', async () => {
    const tag = `scalingo-emulator/bl-${instance}:api`;
    tags.push(tag);
    const labels = { [LABELS.instance]: instance, 'io.scalingo-emulator.test-note': 'costs $5' };
    await runtime.buildImage({ contextDir: dir, dockerfile: `FROM ${DEFAULT_STACK_IMAGE}\n`, tag, labels });
    expect(labelsOf(tag)).toMatchObject(labels);
  });
});
