// A build from a Dockerfile the emulator writes (code without one of its own) leaves nothing in /app
// that the code did not hold (issue 37): the generated file goes under a name of its own, excluded from
// `COPY . /app` by a .dockerignore line (the code's own .dockerignore, when it has one, is kept).

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_STACK_IMAGE } from '../../src/config/schema.ts';
import { createDockerRuntime } from '../../src/runtime/docker-runtime.ts';
import { LABELS } from '../../src/runtime/runtime.ts';
import { docker, removeByLabel } from '../support/docker-cli.ts';

const instance = `gd-${randomBytes(4).toString('hex')}`;
const runtime = createDockerRuntime();
const root = mkdtempSync(join(tmpdir(), 'emu-generated-dockerfile-'));
const tags: string[] = [];
const GENERATED = `FROM ${DEFAULT_STACK_IMAGE}\nCOPY . /app\nWORKDIR /app\n`;

afterAll(async () => {
  for (const t of tags) await runtime.removeImage(t);
  await runtime.close();
  removeByLabel(`${LABELS.instance}=${instance}`);
  rmSync(root, { recursive: true, force: true });
});

async function appFiles(name: string, files: Record<string, string>): Promise<string[]> {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  const tag = `scalingo-emulator/test-${instance}-${name}:1`;
  tags.push(tag);
  await runtime.buildImage({ contextDir: dir, dockerfile: GENERATED, tag, labels: { [LABELS.instance]: instance } });
  return docker('run', '--rm', '--label', `${LABELS.instance}=${instance}`, tag, 'ls', '-A', '/app').split('\n').sort();
}

describe('a generated Dockerfile stays out of /app (real engine)', () => {
  it('the code without a .dockerignore: /app holds exactly its files', async () => {
    expect(await appFiles('plain', { 'index.html': 'hi\n', Procfile: 'web: httpd\n' })).toEqual([
      'Procfile',
      'index.html',
    ]);
  }, 120_000);

  // The engine reads a .dockerignore only for the Dockerfile and itself (the docker CLI applies the rest when it
  // packs a context): a buildpack-like build copies the code whole, as the platform's builds ignore it.
  it("the code's own .dockerignore: /app still holds exactly the code's files", async () => {
    expect(
      await appFiles('own-ignore', { 'index.html': 'hi\n', 'secret.txt': 's', '.dockerignore': 'secret.txt' }),
    ).toEqual(['.dockerignore', 'index.html', 'secret.txt']);
  }, 120_000);
});
