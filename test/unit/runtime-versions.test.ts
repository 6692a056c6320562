import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requestedVersion, resolveVersion, STACK_VERSIONS } from '../../src/modules/deployments/runtime-versions.ts';

const dirs: string[] = [];
const appDir = (files: Record<string, string>) => {
  const d = mkdtempSync(join(tmpdir(), 'emu-rv-'));
  dirs.push(d);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(d, name), content);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the runtime version an app asks for', () => {
  it('reads runtime.txt, the Gemfile ruby directive then .ruby-version', () => {
    expect(requestedVersion('python', appDir({ 'app.py': '' }))).toBeNull();
    expect(requestedVersion('python', appDir({ 'runtime.txt': 'python-3.13.1\n' }))?.wanted).toBe('python-3.13.1');
    expect(
      requestedVersion('ruby', appDir({ Gemfile: "source 'x'\nruby '3.3.0'\n", '.ruby-version': '3.1.2' }))?.wanted,
    ).toBe('3.3.0');
    expect(requestedVersion('ruby', appDir({ Gemfile: '', '.ruby-version': 'ruby-3.1.2\n' }))).toEqual({
      wanted: 'ruby-3.1.2',
      from: '.ruby-version',
    });
  });

  it('picks the Python or Ruby of the same major.minor', () => {
    expect(resolveVersion('python', { wanted: 'python-3.11.9', from: 'x' }).suite).toBe('bookworm');
    expect(resolveVersion('python', { wanted: 'python-3.13', from: 'x' }).suite).toBe('trixie');
    expect(resolveVersion('ruby', { wanted: 'ruby-3.3.0', from: 'x' }).suite).toBe('trixie');
    expect(resolveVersion('ruby', { wanted: '3.1.4p223', from: 'x' }).suite).toBe('bookworm');
  });

  it('a version no suite has is a build error naming the versions that exist', () => {
    expect(() => resolveVersion('python', { wanted: 'python-3.12.1', from: 'runtime.txt' })).toThrow(
      /Python "python-3.12.1" \(runtime.txt\) is not available.*3\.11\.2 \(Debian bookworm\) and 3\.13\.5.*python-3\.13/,
    );
    expect(() => resolveVersion('ruby', { wanted: 'jruby-9.4', from: '.ruby-version' })).toThrow(/Ruby "jruby-9.4"/);
    expect(Object.keys(STACK_VERSIONS)).toEqual(['python', 'ruby']);
    for (const versions of Object.values(STACK_VERSIONS))
      expect(versions.map((v) => v.suite)).toEqual(['bookworm', 'trixie']);
  });
});
