import { readFileSync } from 'node:fs';

// Beside emulator.ts on purpose: `../package.json` is the package root from src/ and from the bundles in dist/.
/** The package's version (package.json): the health route, the CLI, the HTTP app. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
