import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { profilesIn, summarise } from './lib/profile.ts';
import { appendReport, codeVersion, machineInfo, renderResult, renderRun } from './lib/report.ts';
import { snapshotTree } from './lib/snapshot.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

const USAGE = `Usage: npm run bench -- [section…] [options]

Runs every section (bench/*.ts exporting \`section\`) or the ones named, then appends a dated
section with the figures and the machine's description to BENCHMARKS.md.

Options:
  --list               list the sections and exit
  --rounds <n>         repeat each measurement n times, report best / median   [default 3]
  --quick              smoke run: short durations, smaller sizes, one round (the whole run < 5 min);
                       nothing written unless --write is given too; slow sections (sampler) only when named
  --write              append a --quick run's report too (its heading says it was a quick run)
  --no-write           print the report instead of appending it to BENCHMARKS.md
  --emulator-dir <d>   start src/main.ts from another tree (e.g. a patched copy, to measure a change)
  --baseline-dir <d>   also start this tree (e.g. a worktree of main) where a section compares in the same run,
                       rounds interleaved with the measured tree's (pairs); used as it is, not copied aside
  --no-snapshot        start the emulator from the work tree itself; by default src/ is copied aside
                       at the start of the run, so concurrent edits cannot change the code mid-run
  --profile            start emulators with --cpu-prof, print where their time goes (implies --no-write)
  --strict             exit 1 when a target is missed
  -h, --help           this help`;

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_DIR = resolve(BENCH_DIR, '..');

/** Every bench/*.ts but this driver is a section file. */
async function loadSections(): Promise<Section[]> {
  const files = readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
    .sort();
  const sections: Section[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(join(BENCH_DIR, f)).href)) as { section?: Section };
    if (!mod.section) throw new Error(`bench/${f} exports no \`section\``);
    sections.push(mod.section);
  }
  // The issue's order: throughput first, while the machine is coolest; startup last.
  const order = ['api', 'pairs', 'startup'];
  const rank = (s: Section) => (order.includes(s.name) ? order.indexOf(s.name) : order.length);
  return sections.sort((a, b) => rank(a) - rank(b));
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      list: { type: 'boolean' },
      rounds: { type: 'string' },
      quick: { type: 'boolean' },
      write: { type: 'boolean' },
      'no-write': { type: 'boolean' },
      'emulator-dir': { type: 'string' },
      'baseline-dir': { type: 'string' },
      'no-snapshot': { type: 'boolean' },
      profile: { type: 'boolean' },
      strict: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const all = await loadSections();
  if (values.list) {
    for (const s of all) console.log(`${s.name.padEnd(10)} ${s.description}`);
    return 0;
  }
  const unknown = positionals.filter((p) => !all.some((s) => s.name === p));
  if (unknown.length) {
    console.error(`unknown section(s): ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const quick = Boolean(values.quick);
  const chosen = positionals.length
    ? all.filter((s) => positionals.includes(s.name))
    : all.filter((s) => !(quick && s.slow));
  const rounds = quick ? 1 : Number(values.rounds ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) {
    console.error(`--rounds: expected a whole number ≥ 1, got "${values.rounds}"`);
    return 2;
  }
  const profileDir = values.profile ? mkdtempSync(join(tmpdir(), 'bench-profile-')) : null;
  const write = !values['no-write'] && (!quick || Boolean(values.write)) && !profileDir;
  const sourceDir = resolve(values['emulator-dir'] ?? REPO_DIR);
  const code = codeVersion(sourceDir);
  const snapshot = sourceDir === REPO_DIR && !values['no-snapshot'] ? snapshotTree(REPO_DIR) : null;
  const emulatorDir = snapshot?.dir ?? sourceDir;

  const baselineDir = values['baseline-dir'] ? resolve(values['baseline-dir']) : null;
  if (baselineDir && !existsSync(join(baselineDir, 'src/main.ts'))) {
    console.error(`--baseline-dir: no src/main.ts in ${baselineDir}`);
    return 2;
  }
  const ctx: BenchContext = {
    rounds,
    quick,
    emulatorDir,
    repoDir: REPO_DIR,
    profileDir,
    baselineDir,
    log: (l) => console.error(l),
  };
  const machine = machineInfo();
  const startedAt = new Date();
  const runStart = performance.now();
  console.error(
    `bench: ${chosen.map((s) => s.name).join(', ')}; ${machine.cores} cores, Node ${machine.node}, load ${machine.loadStart.map((x) => x.toFixed(2)).join(' ')}`,
  );

  const results: { name: string; result?: Result; error?: string }[] = [];
  for (const s of chosen) {
    const t0 = performance.now();
    try {
      const result = await s.run(ctx);
      results.push({ name: s.name, result });
      console.log(`\n${renderResult(result)}`);
    } catch (err) {
      results.push({ name: s.name, error: (err as Error).stack ?? String(err) });
      console.error(`bench: section ${s.name} failed: ${(err as Error).message}`);
    }
    console.error(`bench: ${s.name} took ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }

  const markdown = renderRun({
    startedAt,
    machine,
    loadEnd: loadavg(),
    code: snapshot ? `${code}, copied aside at the start of the run` : code,
    emulatorDir: sourceDir,
    repoDir: REPO_DIR,
    rounds,
    command: `npm run bench${process.argv.length > 2 ? ` -- ${commandArgs(process.argv.slice(2))}` : ''}`,
    results,
    notes: [
      ...(quick
        ? [
            'Quick run (`--quick`): shorter durations, smaller sizes and one round; a smoke run of the methods, not the figures of record.',
          ]
        : []),
      ...(baselineDir ? [`Baseline tree (\`--baseline-dir\`): ${codeVersion(baselineDir)}, used in place.`] : []),
    ],
  });
  if (write) {
    appendReport(join(REPO_DIR, 'BENCHMARKS.md'), markdown);
    console.error('bench: appended to BENCHMARKS.md');
  } else {
    console.log(`\n----- report (not written) -----\n${markdown}`);
  }
  if (profileDir) {
    // Emulators write their profile when they exit: every child has been stopped by now.
    for (const f of profilesIn(profileDir)) console.log(`\n${summarise(f, emulatorDir)}`);
    console.error(`bench: raw profiles (open in Chrome DevTools) in ${profileDir}`);
  }

  console.error(`bench: whole run took ${((performance.now() - runStart) / 1000).toFixed(0)} s`);
  snapshot?.remove();
  const failed = results.some((r) => r.error);
  const missed = results.some((r) => r.result?.targets.some((t) => !t.met));
  return failed ? 1 : missed && values.strict ? 1 : 0;
}

/** The command's arguments as the report shows them: a directory given to --baseline-dir is this machine's, not named. */
function commandArgs(args: string[]): string {
  return args
    .map((a, i) =>
      args[i - 1] === '--baseline-dir' ? '<dir>' : a.replace(/^--baseline-dir=.*/, '--baseline-dir=<dir>'),
    )
    .join(' ');
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
