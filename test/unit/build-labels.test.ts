import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { labelInstruction, labelledDockerfile } from '../../src/runtime/build-labels.ts';

const dir = mkdtempSync(join(tmpdir(), 'emu-build-labels-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const labels = { 'io.scalingo-emulator.app-id': '6b0898dfd545', 'io.scalingo-emulator.managed': '1' };

describe('build labels as one LABEL instruction', () => {
  it('quotes every label in one instruction', () => {
    expect(labelInstruction(labels)).toBe(
      'LABEL "io.scalingo-emulator.app-id"="6b0898dfd545" "io.scalingo-emulator.managed"="1"',
    );
  });

  it('no instruction for no labels, or for a label the Dockerfile would quote or expand differently', () => {
    expect(labelInstruction({})).toBeNull();
    expect(labelInstruction({ a: '$HOME' })).toBeNull();
    expect(labelInstruction({ a: 'say "hi"' })).toBeNull();
    expect(labelInstruction({ a: 'two\nlines' })).toBeNull();
    expect(labelInstruction({ '': 'x' })).toBeNull();
  });

  it('appends to a generated Dockerfile, on a line of its own', async () => {
    expect(await labelledDockerfile(dir, 'FROM base\nCOPY . /app', labels)).toBe(
      `FROM base\nCOPY . /app\n\n${labelInstruction(labels)}\n`,
    );
  });

  it("appends to the context's own Dockerfile when none is generated", async () => {
    const ctx = mkdtempSync(join(dir, 'own-'));
    writeFileSync(join(ctx, 'Dockerfile'), 'FROM base\nCMD ["true"]\n');
    expect(await labelledDockerfile(ctx, undefined, labels)).toBe(
      `FROM base\nCMD ["true"]\n\n${labelInstruction(labels)}\n`,
    );
  });

  it('keeps the API labels (null) when the Dockerfile could swallow the line or is missing, large or odd', async () => {
    expect(await labelledDockerfile(dir, 'FROM base\nRUN echo a \\\n', labels)).toBeNull();
    expect(await labelledDockerfile(dir, 'FROM base\nRUN echo a \\  \n\n', labels)).toBeNull();
    expect(await labelledDockerfile(dir, '# escape=`\nFROM base\n', labels)).toBeNull();
    expect(await labelledDockerfile(dir, 'FROM base\n', undefined)).toBeNull();
    expect(await labelledDockerfile(dir, 'FROM base\n', { a: '$X' })).toBeNull();
    const none = mkdtempSync(join(dir, 'none-'));
    expect(await labelledDockerfile(none, undefined, labels)).toBeNull();
    const large = mkdtempSync(join(dir, 'large-'));
    writeFileSync(join(large, 'Dockerfile'), `FROM base\n${'# comment\n'.repeat(30_000)}`);
    expect(await labelledDockerfile(large, undefined, labels)).toBeNull();
  });
});
