import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ADDON_KINDS, kindOfProvider, planMemoryBytes } from '../../src/modules/addons/addon-kinds.ts';
import {
  buildContainerNetwork,
  missingNetworkHint,
  watchOfflineBuild,
} from '../../src/modules/deployments/build-network.ts';
import { dependencyInputs, dependencyScript } from '../../src/modules/deployments/build-scripts.ts';
import { defaultProcessTypes, detectBuildpack, detectLanguage } from '../../src/modules/deployments/buildpacks.ts';
import { findRecipe, IMAGE_RECIPES, recipeHash } from '../../src/runtime/image-recipes.ts';

const dirs: string[] = [];
const appDir = (files: Record<string, string>) => {
  const d = mkdtempSync(join(tmpdir(), 'emu-bp-'));
  dirs.push(d);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(d, name), content);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('buildpack detection and defaults', () => {
  it('detects the language from the files the platform buildpacks look for, Node first', () => {
    expect(detectLanguage(appDir({ 'package.json': '{}', 'requirements.txt': '' }))).toBe('node');
    expect(detectLanguage(appDir({ 'requirements.txt': '' }))).toBe('python');
    expect(detectLanguage(appDir({ Pipfile: '' }))).toBe('python');
    expect(detectLanguage(appDir({ Gemfile: '' }))).toBe('ruby');
    expect(detectLanguage(appDir({ Procfile: 'web: httpd' }))).toBeNull();
  });

  it('names the file that made a buildpack apply; a Dockerfile makes none apply', () => {
    expect(detectBuildpack(appDir({ Dockerfile: 'FROM x', 'package.json': '{}' }))).toEqual({
      language: 'node',
      file: 'package.json',
    });
    expect(detectBuildpack(appDir({ Dockerfile: 'FROM x', 'pyproject.toml': '' }))).toEqual({
      language: 'python',
      file: 'pyproject.toml',
    });
    expect(detectBuildpack(appDir({ Dockerfile: 'FROM x', Procfile: 'web: x' }))).toBeNull();
  });

  it('builds.network: how a build container joins it, and the offline hint after a network failure only', () => {
    expect(buildContainerNetwork('none')).toEqual({ networkNone: true });
    expect(buildContainerNetwork('bridge')).toEqual({});
    expect(buildContainerNetwork('my-net')).toEqual({ network: 'my-net' });
    const lines: string[] = [];
    const offline = watchOfflineBuild('none', (l) => lines.push(l));
    offline.say('       npm error code E404');
    expect(offline.hint()).toBeNull();
    offline.say('       Error: getaddrinfo EAI_AGAIN fonts.googleapis.com');
    expect(lines).toEqual(['       npm error code E404', '       Error: getaddrinfo EAI_AGAIN fonts.googleapis.com']);
    expect(offline.hint()).toContain('set builds.network to "bridge"');
    const online = watchOfflineBuild('bridge', () => undefined);
    online.say('Error: getaddrinfo ENOTFOUND example.invalid');
    expect(online.hint()).toBeNull();
    expect(missingNetworkHint('mine', '(HTTP code 404) no such container - network mine not found')).toContain(
      'docker network create mine',
    );
    expect(missingNetworkHint('mine', 'exit code 1')).toBeNull();
    expect(missingNetworkHint('none', 'network none not found')).toBeNull();
  });

  it('gives a web process when there is no Procfile: npm start, server.js, app.py, config.ru, app.rb', () => {
    expect(defaultProcessTypes('node', appDir({ 'package.json': '{"scripts":{"start":"node x.js"}}' }))).toEqual({
      web: 'npm start',
    });
    expect(defaultProcessTypes('node', appDir({ 'package.json': '{}', 'server.js': '' }))).toEqual({
      web: 'node server.js',
    });
    expect(defaultProcessTypes('node', appDir({ 'package.json': 'not json' }))).toEqual({});
    expect(defaultProcessTypes('python', appDir({ 'requirements.txt': '', 'app.py': '' }))).toEqual({
      web: 'python3 app.py',
    });
    expect(defaultProcessTypes('python', appDir({ 'manage.py': '' })).web).toContain('runserver 0.0.0.0:$PORT');
    expect(defaultProcessTypes('ruby', appDir({ Gemfile: '', 'config.ru': '' })).web).toContain('rackup');
    expect(defaultProcessTypes('ruby', appDir({ Gemfile: '', 'app.rb': '' }))).toEqual({
      web: 'bundle exec ruby app.rb',
    });
  });

  it('dependency steps fail on error and say when a package index cannot be reached', () => {
    for (const lang of ['python', 'ruby'] as const) expect(dependencyScript(lang)).toMatch(/^set -e\ncd \/app\n/);
    expect(dependencyScript('python')).toContain('The Python package index (PyPI) cannot be reached');
    expect(dependencyScript('ruby')).toContain('The RubyGems index cannot be reached');
  });

  it('the dependency layer is made of the files naming the dependencies only', () => {
    expect(dependencyInputs('python', appDir({ 'requirements.txt': '', 'app.py': '' }))).toEqual(['requirements.txt']);
    expect(
      dependencyInputs('ruby', appDir({ Gemfile: '', 'Gemfile.lock': '', '.ruby-version': '3.1', 'app.rb': '' })),
    ).toEqual(['Gemfile', 'Gemfile.lock', '.ruby-version']);
  });
});

describe('image recipes and addon kinds', () => {
  it('a recipe hash changes with the recipe and the suite only', () => {
    const node = findRecipe('node')!;
    expect(recipeHash(node, 'bookworm')).toBe(
      recipeHash({ ...node, packages: [...node.packages].reverse() }, 'bookworm'),
    );
    expect(recipeHash(node, 'bookworm')).not.toBe(
      recipeHash({ ...node, packages: [...node.packages, 'make'] }, 'bookworm'),
    );
    expect(recipeHash(node, 'bookworm')).not.toBe(recipeHash(node, 'trixie'));
    expect(new Set(IMAGE_RECIPES.map((r) => r.tag)).size).toBe(IMAGE_RECIPES.length);
  });

  it('addon kinds: providers, plan memory, the platform variable names', () => {
    expect(kindOfProvider('scalingo-postgresql')?.variables).toEqual(['SCALINGO_POSTGRESQL_URL', 'DATABASE_URL']);
    expect(kindOfProvider('scalingo-redis')?.variables).toEqual(['SCALINGO_REDIS_URL', 'REDIS_URL']);
    expect(kindOfProvider('scalingo-mysql')?.variables).toEqual(['SCALINGO_MYSQL_URL']);
    expect(kindOfProvider('scalingo-mongodb')).toBeUndefined();
    expect(planMemoryBytes('postgresql-sandbox')).toBe(256 * 1024 * 1024);
    expect(planMemoryBytes('postgresql-business-1024')).toBe(1024 * 1024 * 1024);
    expect(ADDON_KINDS.postgresql.url({ username: 'u', password: 'p', database: 'd' }, 'h', 5432)).toBe(
      'postgres://u:p@h:5432/d',
    );
    for (const k of Object.values(ADDON_KINDS)) expect(findRecipe(k.recipe)?.kind).toBe('addon');
  });
});
