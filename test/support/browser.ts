import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

// Debian's Chromium (installed by scripts/docker-up.sh), driven by playwright-core: no browser download.
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

// Where a test's screenshot goes: test-artifacts/ on every run, so `npm test` leaves the working tree as it
// found it; the README's pictures in docs/ are rewritten only when asked (`UPDATE_SCREENSHOTS=1 npx vitest run
// test/e2e/dashboard*.test.ts`).
export function screenshotPath(name: string): string {
  const root = resolve(import.meta.dirname, '../..');
  const folder = process.env.UPDATE_SCREENSHOTS === '1' ? join(root, 'docs') : join(root, 'test-artifacts');
  mkdirSync(folder, { recursive: true });
  return join(folder, name);
}
