import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  requestedVersion,
  resolveVersion,
  satisfies,
  STACK_VERSIONS,
} from '../../src/modules/deployments/runtime-versions.ts';

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

describe('npm semver ranges', () => {
  it.each([
    ['20.19.2', '20.x', true],
    ['20.19.2', '20', true],
    ['18.20.4', '20', false],
    ['20.19.2', '>=18', true],
    ['20.19.2', '>= 18 <20', false],
    ['18.20.4', '>=18 <20', true],
    ['18.20.4', '^18.2.0', true],
    ['20.19.2', '^18.2.0', false],
    ['18.20.4', '~18.20.1', true],
    ['18.20.4', '~18.19', false],
    ['20.19.2', '16.x || 20.x', true],
    ['20.19.2', '*', true],
    ['18.20.4', '>18', false],
    ['18.20.4', '<=18', true],
    ['20.19.2', '18 - 20', true],
    ['20.19.2', 'v20.19.2', true],
    ['20.19.2', 'lts/*', false],
  ])('%s satisfies %j: %s', (version, range, expected) => {
    expect(satisfies(version, range)).toBe(expected);
  });
});

describe('the runtime version an app asks for', () => {
  it('reads engines.node, runtime.txt, the Gemfile ruby directive then .ruby-version', () => {
    expect(requestedVersion('node', appDir({ 'package.json': '{"engines":{"node":"20.x"}}' }))).toEqual({
      wanted: '20.x',
      from: 'engines.node in package.json',
    });
    expect(requestedVersion('node', appDir({ 'package.json': '{}' }))).toBeNull();
    expect(requestedVersion('python', appDir({ 'runtime.txt': 'python-3.13.1\n' }))?.wanted).toBe('python-3.13.1');
    expect(
      requestedVersion('ruby', appDir({ Gemfile: "source 'x'\nruby '3.3.0'\n", '.ruby-version': '3.1.2' }))?.wanted,
    ).toBe('3.3.0');
    expect(requestedVersion('ruby', appDir({ Gemfile: '', '.ruby-version': 'ruby-3.1.2\n' }))).toEqual({
      wanted: 'ruby-3.1.2',
      from: '.ruby-version',
    });
  });

  it('picks the highest Node.js satisfying the range, and the Python or Ruby of the same major.minor', () => {
    expect(resolveVersion('node', { wanted: '>=18', from: 'x' }).suite).toBe('trixie');
    expect(resolveVersion('node', { wanted: '18.x', from: 'x' }).suite).toBe('bookworm');
    expect(resolveVersion('python', { wanted: 'python-3.11.9', from: 'x' }).suite).toBe('bookworm');
    expect(resolveVersion('python', { wanted: 'python-3.13', from: 'x' }).suite).toBe('trixie');
    expect(resolveVersion('ruby', { wanted: 'ruby-3.3.0', from: 'x' }).suite).toBe('trixie');
    expect(resolveVersion('ruby', { wanted: '3.1.4p223', from: 'x' }).suite).toBe('bookworm');
  });

  it('a version no suite has is a build error naming the versions that exist', () => {
    expect(() => resolveVersion('node', { wanted: '22.x', from: 'engines.node in package.json' })).toThrow(
      'Node.js "22.x" (engines.node in package.json) is not available: the emulator builds its stacks from Debian\'s packages, which have Node.js 18.20.4 (Debian bookworm) and 20.19.2 (Debian trixie). Ask for one of those (e.g. "engines": { "node": "20.x" }).',
    );
    expect(() => resolveVersion('python', { wanted: 'python-3.12.1', from: 'runtime.txt' })).toThrow(
      /Python "python-3.12.1" \(runtime.txt\) is not available.*3\.11\.2 \(Debian bookworm\) and 3\.13\.5.*python-3\.13/,
    );
    expect(() => resolveVersion('ruby', { wanted: 'jruby-9.4', from: '.ruby-version' })).toThrow(/Ruby "jruby-9.4"/);
    for (const versions of Object.values(STACK_VERSIONS))
      expect(versions.map((v) => v.suite)).toEqual(['bookworm', 'trixie']);
  });
});
