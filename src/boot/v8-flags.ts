import { setFlagsFromString } from 'node:v8';

/**
 * V8 options the `scalingo-emulator` command sets on itself at run time (the programmatic API, which lives in its host's
 * process, sets none).
 *
 * A burst of container output is allocation at ~1 KB a log line, and V8 lets the old generation grow up to 4× what survived
 * its last full collection before the next one, so a 1,000,000-line burst peaked at ~260 MiB of garbage awaiting
 * collection. A fixed 1.5× keeps that peak under 200 MiB at no measured cost a line (BENCHMARKS.md, issue 25;
 * docs/architecture.md).
 *
 * V8 stamps a code cache with a hash of its options and rejects a cache made under other ones, so the command's loader
 * (src/boot/main-entry.ts) sets them before it compiles anything; setting them again to the same values changes nothing.
 */
export const RUNTIME_V8_FLAGS = ['--heap-growing-percent=50'];

export function applyRuntimeV8Flags(): void {
  for (const flag of RUNTIME_V8_FLAGS) setFlagsFromString(flag);
}
