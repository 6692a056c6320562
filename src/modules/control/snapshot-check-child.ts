// The snapshot check's child process (started by snapshot-check-process.ts, built as dist/snapshot-check.cjs): checks
// and migrates the file named by its one argument, then prints the result as one JSON line.
import { checkAndMigrate } from './snapshot-check.ts';

const file = process.argv[2];
process.stdout.write(`${JSON.stringify(file ? checkAndMigrate(file) : { ok: false, problem: 'no file to check' })}\n`);
