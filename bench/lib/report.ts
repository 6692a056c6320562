import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { type Result } from './types.ts';

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  loadStart: number[];
}

export function machineInfo(): Machine {
  const cpus = os.cpus();
  return {
    cores: os.availableParallelism?.() ?? cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadStart: os.loadavg(),
  };
}

/** Which code was measured: commit, and whether the tree had changes not committed. */
export function codeVersion(dir: string): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=all', '--', 'src').split('\n').filter(Boolean).length;
    return dirty
      ? `${commit} + uncommitted changes in ${dirty} file(s) of src/ (modified or new: other developers' work in progress)`
      : `${commit} (src/ clean)`;
  } catch {
    return 'not a git work tree';
  }
}

const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');

function table(headers: string[], rows: string[][]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${headers.map(esc).join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

export function renderResult(r: Result): string {
  const parts = [`### ${r.title}`, '', r.method, ''];
  for (const t of r.tables) {
    if (t.caption) parts.push(t.caption, '');
    parts.push(table(t.headers, t.rows), '');
  }
  if (r.targets.length) {
    parts.push(
      table(
        ['target', 'wanted', 'measured', 'met'],
        r.targets.map((t) => [t.what, t.target, t.measured, t.met ? 'yes' : '**no**']),
      ),
      '',
    );
  }
  for (const n of r.notes ?? []) parts.push(`- ${n}`);
  if (r.notes?.length) parts.push('');
  return parts.join('\n');
}

export interface RunReport {
  startedAt: Date;
  machine: Machine;
  loadEnd: number[];
  code: string;
  emulatorDir: string;
  repoDir: string;
  rounds: number;
  command: string;
  results: { name: string; result?: Result; error?: string }[];
  notes: string[];
}

export function renderRun(rep: RunReport): string {
  const m = rep.machine;
  const when = rep.startedAt
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
  const lines = [
    `## ${when} — ${rep.results.map((r) => r.name).join(', ')}`,
    '',
    `- Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}`,
    `- Node ${m.node}; load average (1/5/15 min) at start ${load(m.loadStart)}, at end ${load(rep.loadEnd)}`,
    `- Code measured: ${rep.code}${rep.emulatorDir !== rep.repoDir ? ` (emulator started from ${rep.emulatorDir})` : ''}`,
    `- Command: \`${rep.command}\`; every measurement repeated ${rep.rounds} times (the machine is shared with other developers' test runs): tables give best / median`,
    ...rep.notes.map((n) => `- ${n}`),
    '',
  ];
  for (const r of rep.results) {
    if (r.result) lines.push(renderResult(r.result));
    else lines.push(`### ${r.name}: FAILED`, '', '```', r.error ?? '', '```', '');
  }
  return lines.join('\n');
}

const HEADER = `# Benchmarks

Figures measured by \`npm run bench\` (bench/run.ts), appended one dated section per run: nothing here is
asserted, every number comes from a run on the machine described in its section.

How it measures:
- Every server under test runs in its own child process started the same way (\`node --import tsx …\`); the
  load generator (autocannon, or an undici keep-alive pool) runs in the driver process, so it never shares an
  event loop with a server. On a 2-core machine the client and the server each get about one core.
- Each figure is compared with a baseline measured in the same run: a bare Hono hello-world on
  @hono/node-server (bench/lib/hello-server.ts), which also serves the emulator's exact JSON body and stub
  create/delete routes, so the cost of the emulator's own logic can be told apart from HTTP and payload costs.
- Each measurement is repeated (\`--rounds\`, default 3) with the targets interleaved, and reported as
  best / median, because other developers may be running test suites on the same machine meanwhile; the load
  average at start and end of the run is recorded for that reason.
- Docker-backed figures (scale, logs, deploy, git-push) are compared with the raw \`docker\` CLI doing the same work in
  the same run (\`docker run\`, \`docker logs -f\`, \`docker build\` + \`docker run\`), on the same images; memory figures
  (VmRSS and VmHWM from /proc/<pid>/status, read once RSS stops moving) with a bare node:http server and a bare Hono
  server bundled and started the way \`npm start\` starts the emulator. Growth figures say how each stage was seeded
  (through the API, or with the emulator's own stores when the API would take tens of minutes).
- Sections: \`npm run bench -- --list\`; run a subset with \`npm run bench -- api pairs\` (or \`npm run bench -- memory\`).
- \`npm run bench -- --quick\`: a smoke run of every section (shorter durations, smaller sizes, one round) that
  prints its report without writing it; add \`--write\` to append it anyway, marked as a quick run. The figures of
  record come from full runs. The driver prints how long each section and the whole run took.
`;

export function appendReport(file: string, markdown: string): void {
  if (!existsSync(file)) writeFileSync(file, `${HEADER}\n`);
  appendFileSync(file, `\n${markdown}`);
}
