import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.ts';

// A user may have `npm start` running on the default ports while `npm test` runs: a test that starts an emulator
// process must choose every port, since a port flag left out is a default one (issue 37).
const ROOT = resolve(import.meta.dirname, '../..');
const FLAGS = ['--port', '--router-port', '--ssh-port'];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

const quoted = (flag: string) => new RegExp(`['"\`]${flag}['"\`]`);

describe('tests choose their ports', () => {
  const files = testFiles(join(ROOT, 'test')).map((f) => ({ name: relative(ROOT, f), text: readFileSync(f, 'utf8') }));

  // FREE_PORT_FLAGS (test/support/free-port.ts) is the three at once.
  it('a file passing one port flag passes all three', () => {
    const partial = files
      .filter((f) => FLAGS.some((flag) => quoted(flag).test(f.text)))
      .filter((f) => !FLAGS.every((flag) => quoted(flag).test(f.text)) && !f.text.includes('FREE_PORT_FLAGS'))
      .map((f) => f.name);
    expect(partial).toEqual([]);
  });

  it('no port flag names a default port', () => {
    const defaults = configSchema.parse({});
    const ports = [defaults.port, defaults.routerPort, defaults.sshPort];
    const onDefault = new RegExp(`(${FLAGS.join('|')})['"\`]?[ =,]+['"\`]?(${ports.join('|')})\\b`);
    expect(files.filter((f) => onDefault.test(f.text)).map((f) => f.name)).toEqual([]);
  });
});
