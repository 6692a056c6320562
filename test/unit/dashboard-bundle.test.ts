import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

type Files = Record<'index.html' | 'app.js' | 'style.css', string>;
// The build's own function (scripts/build.mjs calls it for dist/dashboard/).
const bundleDashboard = async (): Promise<Files> =>
  (
    (await import('../../scripts/build-dashboard.mjs' as string)) as { bundleDashboard: () => Promise<Files> }
  ).bundleDashboard();

// The dashboard is one static bundle the emulator serves (no second server): its page, script and
// style sheet, xterm.js included, stay within 300 KB gzipped (issue 41).
const BUDGET = 300 * 1024;

describe('the dashboard bundle', () => {
  it('holds xterm.js and its style sheet, and stays within 300 KB gzipped', async () => {
    const files = await bundleDashboard();
    expect(Object.keys(files).sort()).toEqual(['app.js', 'index.html', 'style.css']);
    // xterm.js's renderer and sheet are in (a terminal without them shows nothing).
    expect(files['app.js']).toContain('xterm-helper-textarea');
    expect(files['style.css']).toContain('.xterm .xterm-viewport');
    const gzipped = Object.values(files).reduce((n, text) => n + gzipSync(text, { level: 9 }).length, 0);
    expect(gzipped).toBeGreaterThan(50 * 1024); // xterm.js alone is ~90 KB gzipped: a smaller total lost it
    expect(gzipped).toBeLessThanOrEqual(BUDGET);
  });

  it('fetches nothing from another origin', async () => {
    const files = await bundleDashboard();
    expect(files['index.html']).not.toMatch(/https?:\/\//);
    expect(files['style.css']).not.toMatch(/url\(\s*['"]?https?:/);
  });
});
