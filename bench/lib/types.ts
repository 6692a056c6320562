/**
 * What a benchmark section is: one file in bench/ exporting `section`. The driver (bench/run.ts)
 * finds every such file, so a later issue adds a section by adding a file.
 */

export interface BenchContext {
  /** Times each measurement is repeated (others may be loading the machine: we report best and median). */
  rounds: number;
  /** Shorter durations for a smoke run; figures from it are not meant for BENCHMARKS.md. */
  quick: boolean;
  /** Tree whose src/main.ts is started (default: this repository). */
  emulatorDir: string;
  /** The repository holding bench/ (and node_modules). */
  repoDir: string;
  /** Start emulator children with --cpu-prof into this directory (figures then are not comparable). */
  profileDir: string | null;
  /**
   * Another tree (`--baseline-dir`, e.g. a worktree of main) that sections able to compare start beside the measured
   * one, their rounds interleaved: a before / after measured in the same window (pairs does). null: none.
   */
  baselineDir: string | null;
  log(line: string): void;
}

export interface Target {
  what: string;
  target: string;
  measured: string;
  met: boolean;
}

export interface Table {
  caption?: string;
  headers: string[];
  rows: string[][];
}

export interface Result {
  title: string;
  /** How it was measured, in a few sentences. */
  method: string;
  tables: Table[];
  targets: Target[];
  notes?: string[];
}

export interface Section {
  /** What is typed after `npm run bench --`. */
  name: string;
  description: string;
  /**
   * Left out of `--quick` unless named: its figure needs long real-time windows (the sampler's default
   * interval is a minute), which a smoke run cannot shorten without measuring something else.
   */
  slow?: boolean;
  run(ctx: BenchContext): Promise<Result>;
}
