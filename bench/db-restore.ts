import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from './lib/emulator-client.ts';
import { type Child, spawnEmulator } from './lib/processes.ts';
import { median, ms, sleep } from './lib/stats.ts';
import { type BenchContext, type Result, type Section } from './lib/types.ts';

// Issue 22's target: restoring a 100 MB PostgreSQL backup through the database API takes at most 1.3×
// a plain pg_restore of the same file into the same server.
const MAX_RATIO = 1.3;
const APP = 'bench-restore-app';
const MiB = 1024 * 1024;
/** The flags of the database API's restore (addon-kinds.ts), given to the baseline's pg_restore too. */
const RESTORE_FLAGS = ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--no-comments', '--exit-on-error'];

/** One HTTP request on a connection of its own (no keep-alive pool: minutes of psql between two calls outlast any idle timeout). */
function request(
  url: string,
  method: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', (err) => reject(new Error(`${method} ${url.replace(/\?.*/, '')}: ${err.message}`)));
    req.end();
  });
}

const docker = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8', maxBuffer: 64 * MiB }).trim();

/**
 * A real PostgreSQL addon filled with incompressible rows until its backup (pg_dump custom format in a
 * tar.gz, as the platform's) weighs the target size. Per round: (a) the emulator's restore —
 * POST /api/databases/:id/backups/:backup/restore until GET …/restores/:id says done (the archive streamed
 * into the container's `tar | pg_restore`); (b) the baseline — `pg_restore` with the same flags (RESTORE_FLAGS)
 * of the same .pgsql file, already in the container, into the same live database (`docker exec`, timed around
 * the command). Neither runs in parallel (`-j` needs a file, the restore reads a stream). Each after a VACUUM
 * ANALYZE of the table and a CHECKPOINT, the order alternating from round to round.
 */
export const section: Section = {
  name: 'db-restore',
  description: 'Restoring a 100 MB PostgreSQL backup through the database API vs a plain pg_restore (issue 22)',
  async run(ctx: BenchContext): Promise<Result> {
    const targetBytes = (ctx.quick ? 10 : 100) * MiB;
    const tmp = mkdtempSync(join(tmpdir(), 'bench-restore-'));
    const children: Child[] = [];
    let container = '';
    try {
      const emu = await spawnEmulator({
        emulatorDir: ctx.emulatorDir,
        dataDir: join(tmp, 'data'),
        profileDir: ctx.profileDir,
      });
      children.push(emu);
      const c = new ApiClient(emu.api, 4);
      await c.exchange(emu.token ?? '');
      await c.expect('POST', '/v1/apps', 201, { app: { name: APP } });
      const added = JSON.parse(
        await c.expect('POST', `/v1/apps/${APP}/addons`, 201, {
          addon: { addon_provider_id: 'scalingo-postgresql', plan_id: 'postgresql-business-1024' },
        }),
      );
      const addonId = added.addon.id as string;
      const deadline = performance.now() + 600_000;
      for (;;) {
        const status = JSON.parse(await c.expect('GET', `/v1/apps/${APP}/addons/${addonId}`, 200)).addon.status;
        if (status === 'running') break;
        if (status === 'error' || performance.now() > deadline)
          throw new Error(`the PostgreSQL addon did not start (${status})`);
        await sleep(500);
      }
      const token = JSON.parse(await c.expect('POST', `/v1/apps/${APP}/addons/${addonId}/token`, 200)).addon
        .token as string;
      const dbapi = async (method: 'GET' | 'POST', path: string, status: number) => {
        const res = await request(`${emu.api}/api${path}`, method, {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
        });
        const text = res.body.toString();
        if (res.status !== status)
          throw new Error(`${method} ${path}: expected ${status}, got ${res.status} ${text.slice(0, 300)}`);
        return JSON.parse(text);
      };
      container = docker('ps', '-q', '--filter', `label=io.scalingo-emulator.addon-id=${addonId}`);
      const vars = JSON.parse(await c.expect('GET', `/v1/apps/${APP}/variables`, 200)).variables as {
        name: string;
        value: string;
      }[];
      const url = new URL(vars.find((v) => v.name === 'SCALINGO_POSTGRESQL_URL')?.value ?? '');
      const user = url.username;
      const db = url.pathname.slice(1);
      const psql = (sql: string, database = db) =>
        docker('exec', '-u', 'postgres', container, 'psql', '-v', 'ON_ERROR_STOP=1', '-d', database, '-tAc', sql);

      // Rows of random hex, added until the backup is big enough.
      ctx.log(`filling the database up to a ${targetBytes / MiB} MiB backup`);
      psql(
        `CREATE TABLE payload (id bigserial PRIMARY KEY, body text NOT NULL); ALTER TABLE payload OWNER TO "${user}"`,
      );
      let backup: { id: string; size: number } = { id: '', size: 0 };
      for (let batch = 0; backup.size < targetBytes; batch++) {
        // 256 hex characters of md5s compress to about 140 bytes in the dump.
        const rows = Math.ceil((targetBytes - backup.size) / 135) + 1000;
        psql(
          `INSERT INTO payload (body) SELECT ${Array.from({ length: 8 }, () => 'md5(random()::text)').join(' || ')} FROM generate_series(1, ${rows})`,
        );
        const made = (await dbapi('POST', `/databases/${addonId}/backups`, 201)).database_backup;
        for (;;) {
          const b = (await dbapi('GET', `/backups/${made.id}`, 200)).database_backup;
          if (b.status === 'error') throw new Error('the backup failed');
          if (b.status === 'done') {
            backup = { id: b.id, size: b.size };
            break;
          }
          await sleep(200);
        }
        ctx.log(`  backup ${batch + 1}: ${(backup.size / MiB).toFixed(1)} MiB`);
        if (batch > 20) throw new Error('the backup does not grow');
      }

      // The same .pgsql file, in the container, for the baseline.
      const { download_url } = await dbapi('GET', `/databases/${addonId}/backups/${backup.id}/archive`, 200);
      writeFileSync(join(tmp, 'backup.tar.gz'), (await request(download_url, 'GET')).body);
      execFileSync('tar', ['xzf', join(tmp, 'backup.tar.gz'), '-C', tmp]);
      const dump = readdirSync(tmp).find((f) => f.endsWith('.pgsql')) ?? '';
      const dumpBytes = statSync(join(tmp, dump)).size;
      docker('cp', join(tmp, dump), `${container}:/tmp/plain.pgsql`);
      docker('exec', container, 'chmod', 'a+r', '/tmp/plain.pgsql');

      const ours: number[] = [];
      const plain: number[] = [];
      // Each timing starts on a quiet server: the previous restore's table vacuumed and analysed (else autovacuum
      // works on it during the next timing), its dirty pages written out.
      const quiesce = () => {
        psql('VACUUM ANALYZE payload');
        psql('CHECKPOINT', 'postgres');
      };
      const timePlain = () => {
        quiesce();
        const t = performance.now();
        docker(
          'exec',
          '-u',
          'postgres',
          container,
          'pg_restore',
          ...RESTORE_FLAGS,
          '-U',
          user,
          '-d',
          db,
          '/tmp/plain.pgsql',
        );
        plain.push(performance.now() - t);
      };
      const timeOurs = async () => {
        quiesce();
        const t = performance.now();
        const started = (await dbapi('POST', `/databases/${addonId}/backups/${backup.id}/restore`, 202)).restore;
        for (;;) {
          const r = (await dbapi('GET', `/databases/${addonId}/restores/${started.id}`, 200)).restore;
          if (r.status === 'error') throw new Error(`the restore failed: ${r.error}`);
          if (r.status === 'done') break;
          await sleep(20);
        }
        ours.push(performance.now() - t);
      };
      // The order alternates (plain first in odd rounds, ours first in even ones) so neither side always follows the other.
      const perRound: string[][] = [];
      for (let round = 1; round <= ctx.rounds; round++) {
        const loadBefore = loadavg()[0] ?? 0;
        if (round % 2) {
          timePlain();
          await timeOurs();
        } else {
          await timeOurs();
          timePlain();
        }
        const [p, o] = [plain[plain.length - 1] ?? 0, ours[ours.length - 1] ?? 0];
        const load = `${loadBefore.toFixed(2)} → ${(loadavg()[0] ?? 0).toFixed(2)}`;
        perRound.push([String(round), round % 2 ? 'plain' : 'API', ms(p), ms(o), `${(o / p).toFixed(2)}×`, load]);
        ctx.log(`  round ${round}: plain pg_restore ${ms(p)}, database API restore ${ms(o)} (load ${load})`);
      }
      const rows = psql('SELECT count(*) FROM payload');
      const best = Math.min(...ours) / Math.min(...plain);
      const med = median(ours) / median(plain);
      return {
        title: 'Restoring a PostgreSQL backup (issue 22)',
        method:
          `A real PostgreSQL addon (business-1024) holding ${rows} rows of random text; its backup (pg_dump custom format in a tar.gz, ${(backup.size / MiB).toFixed(1)} MiB; ` +
          `the .pgsql inside ${(dumpBytes / MiB).toFixed(1)} MiB). Per round, both into the addon's live database, each after a VACUUM ANALYZE of the table and a CHECKPOINT: a plain \`pg_restore ${RESTORE_FLAGS.join(' ')}\` ` +
          `of the .pgsql, already in the container (docker exec), and the database API's restore of the backup (POST …/backups/:id/restore until GET …/restores/:id is done: ` +
          `the archive streamed on the stdin of \`tar xzO | pg_restore\` with the same flags). No \`-j\` on either side. ${ctx.rounds} rounds, the order alternating; ` +
          `load average (1 min) before → after each round.`,
        tables: [
          {
            headers: ['what', 'best', 'median'],
            rows: [
              ['plain pg_restore', ms(Math.min(...plain)), ms(median(plain))],
              ['database API restore', ms(Math.min(...ours)), ms(median(ours))],
              ['ratio', `${best.toFixed(2)}×`, `${med.toFixed(2)}×`],
            ],
          },
          {
            headers: ['round', 'first', 'plain pg_restore', 'database API restore', 'ratio', 'load average'],
            rows: perRound,
          },
        ],
        notes: [
          'The archive is no longer put into the container by the engine and extracted before pg_restore starts (1.78–1.92× on 2026-11-26): it is ' +
            "streamed on the exec's stdin and pg_restore reads the dump as tar extracts it, so the copy overlaps the restore.",
        ],
        targets: [
          {
            what: 'restore / plain pg_restore (best of rounds)',
            target: `≤ ${MAX_RATIO}×`,
            measured: `${best.toFixed(2)}× (median ${med.toFixed(2)}×)`,
            met: best <= MAX_RATIO,
          },
        ],
      };
    } finally {
      for (const ch of children) await ch.stop();
      if (container) {
        const labels = docker('inspect', '-f', '{{index .Config.Labels "io.scalingo-emulator.owner"}}', container);
        for (const id of docker('ps', '-aq', '--filter', `label=io.scalingo-emulator.owner=${labels}`)
          .split('\n')
          .filter(Boolean))
          docker('rm', '-f', id);
        for (const v of docker('volume', 'ls', '-q', '--filter', `name=scalingo-emu-${labels}-`)
          .split('\n')
          .filter(Boolean))
          docker('volume', 'rm', '-f', v);
        for (const n of docker('network', 'ls', '-q', '--filter', `name=scalingo-emu-${labels}-`)
          .split('\n')
          .filter(Boolean))
          docker('network', 'rm', n);
      }
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};
