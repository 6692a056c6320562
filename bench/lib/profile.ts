import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Summarises V8 .cpuprofile files (from `--profile`, which starts emulator children with --cpu-prof):
 * where the time goes, by function (self and inclusive) and by area (package, src/ file, Node internals).
 */

interface CpuNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function area(url: string, repoDir: string): string {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) return 'node internals';
  const path = url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (nm) return `npm ${nm[1]}`;
  return relative(repoDir, path) || path;
}

function key(n: CpuNode, repoDir: string): string {
  const f = n.callFrame;
  if (!f.url) return f.functionName || '(anonymous)';
  return `${f.functionName || '(anonymous)'} ${area(f.url, repoDir)}:${f.lineNumber + 1}`;
}

export function summarise(file: string, repoDir: string, top = 15): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') return;
    busy += dt;
    const k = key(node, repoDir);
    self.set(k, (self.get(k) ?? 0) + dt);
    const a = node.callFrame.url ? area(node.callFrame.url, repoDir) : node.callFrame.functionName;
    areas.set(a, (areas.get(a) ?? 0) + dt);
    // Inclusive: each function once per sample, however deep the recursion.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const ck = key(byId.get(cur)!, repoDir);
      if (seen.has(ck)) continue;
      seen.add(ck);
      incl.set(ck, (incl.get(ck) ?? 0) + dt);
    }
  });
  const total = (p.endTime - p.startTime) / 1000;
  const fmt = (m: Map<string, number>, skipRoot: boolean) =>
    [...m]
      .filter(([k]) => !skipRoot || !/^\((root|program)\)/.test(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(
        ([k, us]) =>
          `  ${((us / busy) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`,
      )
      .join('\n');
  return [
    `profile ${file}: ${(total / 1000).toFixed(1)} s recorded, ${(busy / 1e6).toFixed(1)} s busy (not idle); % of busy time`,
    'self time by area:',
    fmt(areas, false),
    'self time by function:',
    fmt(self, false),
    'inclusive time by function:',
    fmt(incl, true),
  ].join('\n');
}

export function profilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .map((f) => join(dir, f));
}
