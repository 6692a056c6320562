import { ApiRoutes } from '../../http/api-routes.ts';
import { ApiError } from '../../http/errors.ts';
import { limitBody } from '../../http/middleware/json-only.ts';
import { jsonBody, readJson } from '../../http/validate.ts';
import { isoDate } from '../../shared/clock.ts';
import { type AdminFailureWindow, requireAdmin } from './admin-auth.ts';
import {
  addFaultBody,
  advanceSchema,
  clockAnswer,
  faultEnvelope,
  faultList,
  resetSchema,
  snapshotEnvelope,
  snapshotList,
} from './control.schemas.ts';
import { type Control } from './control.ts';
import { SNAPSHOT_MAX_BYTES, snapshotJson } from './snapshots.ts';

// Control bodies are small JSON; a snapshot import is the raw SQLite file.
const JSON_LIMIT = 64 * 1024;
const SNAPSHOT_FILE = { contentType: 'application/vnd.sqlite3', description: 'The snapshot file (a SQLite database)' };

/**
 * The control plane: /_emulator/reset, snapshots, faults, clock. Every route needs the admin token
 * from a loopback peer (admin-auth.ts); /_emulator/health and /_emulator/billing stay public (their own routes).
 */
export function controlRoutes(deps: {
  control: Control;
  adminToken: () => string;
  adminFailures?: AdminFailureWindow;
}) {
  const { control } = deps;
  const r = new ApiRoutes('control');
  const admin = requireAdmin({ token: deps.adminToken, failures: deps.adminFailures });
  const small = limitBody(JSON_LIMIT);
  const clockJson = () => ({ clock: { mode: control.clock.mode, now: isoDate(control.clock.now()) } });

  r.add(
    {
      method: 'post',
      path: '/_emulator/reset',
      summary: "Reset: every app (or one user's) and what goes with it",
      auth: 'admin',
      middleware: [admin, small],
      body: resetSchema,
      responses: { 204: null },
    },
    async (c, { body }) => {
      await control.reset(body);
      return c.body(null, 204);
    },
  );

  r.add(
    {
      method: 'post',
      path: '/_emulator/snapshots',
      summary: 'Take a snapshot of the state',
      auth: 'admin',
      middleware: [admin, small],
      responses: { 201: snapshotEnvelope },
    },
    (c) => c.json({ snapshot: control.snapshot() }, 201),
  );
  r.add(
    {
      method: 'get',
      path: '/_emulator/snapshots',
      summary: 'List kept snapshots',
      auth: 'admin',
      middleware: [admin],
      responses: { 200: snapshotList },
    },
    (c) => c.json({ snapshots: control.snapshots.list().map(snapshotJson) }),
  );
  // Import: the body is a snapshot file, as GET /_emulator/snapshots/:id gave it.
  r.add(
    {
      method: 'post',
      path: '/_emulator/snapshots/restore',
      summary: 'Restore the state from a snapshot file (the request body)',
      description:
        'The body is a snapshot file (`application/vnd.sqlite3`) as `GET /_emulator/snapshots/{id}` gave it.',
      auth: 'admin',
      middleware: [admin, limitBody(SNAPSHOT_MAX_BYTES)],
      responses: { 204: null },
    },
    async (c) => {
      const data = Buffer.from(await c.req.arrayBuffer());
      if (!data.length)
        throw ApiError.invalid('snapshot', 'the body must be a snapshot file (application/vnd.sqlite3)');
      await control.restore(data);
      return c.body(null, 204);
    },
  );
  r.add(
    {
      method: 'get',
      path: '/_emulator/snapshots/:id',
      summary: 'Download a snapshot file',
      auth: 'admin',
      middleware: [admin],
      responses: { 200: SNAPSHOT_FILE },
    },
    (c, { params }) => {
      const id = params.id;
      const data = control.snapshots.data(id);
      return c.body(new Uint8Array(data), 200, {
        'content-type': 'application/vnd.sqlite3',
        'content-disposition': `attachment; filename="${id}.sqlite"`,
      });
    },
  );
  r.add(
    {
      method: 'post',
      path: '/_emulator/snapshots/:id/restore',
      summary: 'Restore a kept snapshot',
      auth: 'admin',
      middleware: [admin, small],
      responses: { 204: null },
    },
    async (c, { params }) => {
      await control.restore(control.snapshots.find(params.id).id);
      return c.body(null, 204);
    },
  );
  r.add(
    {
      method: 'delete',
      path: '/_emulator/snapshots/:id',
      summary: 'Delete a kept snapshot',
      auth: 'admin',
      middleware: [admin],
      responses: { 204: null },
    },
    (c, { params }) => {
      control.snapshots.remove(params.id);
      return c.body(null, 204);
    },
  );

  r.add(
    {
      method: 'post',
      path: '/_emulator/faults',
      summary: 'Inject a fault (API, crash, OOM, Docker unavailable, log delay)',
      description:
        '`type` may be left out when the fields say it: `path` is an API fault, `log_delay_ms` a log delay. Crash and OOM faults act at once and are not kept.',
      auth: 'admin',
      middleware: [admin, small],
      body: addFaultBody,
      rawBody: true,
      responses: { 201: faultEnvelope },
    },
    async (c) => {
      const body = (await readJson(c)) as { fault?: unknown } | null;
      if (
        typeof body !== 'object' ||
        body === null ||
        typeof body.fault !== 'object' ||
        body.fault === null ||
        Array.isArray(body.fault)
      )
        throw ApiError.invalid('fault', 'missing field');
      return c.json({ fault: await control.faults.add(body.fault) }, 201);
    },
  );
  r.add(
    {
      method: 'get',
      path: '/_emulator/faults',
      summary: 'List active faults',
      auth: 'admin',
      middleware: [admin],
      responses: { 200: faultList },
    },
    (c) => c.json({ faults: control.faults.list() }),
  );
  r.add(
    {
      method: 'delete',
      path: '/_emulator/faults/:id',
      summary: 'Remove a fault',
      auth: 'admin',
      middleware: [admin],
      responses: { 204: null },
    },
    (c, { params }) => {
      control.faults.remove(params.id);
      return c.body(null, 204);
    },
  );
  r.add(
    {
      method: 'delete',
      path: '/_emulator/faults',
      summary: 'Remove every fault',
      auth: 'admin',
      middleware: [admin],
      responses: { 204: null },
    },
    (c) => {
      control.faults.clear();
      return c.body(null, 204);
    },
  );

  r.add(
    {
      method: 'get',
      path: '/_emulator/clock',
      summary: "The emulator's clock (mode and now)",
      auth: 'admin',
      middleware: [admin],
      responses: { 200: clockAnswer },
    },
    (c) => c.json(clockJson()),
  );
  r.add(
    {
      method: 'post',
      path: '/_emulator/clock/advance',
      summary: 'Move the manual clock forward (due timers fire in order)',
      auth: 'admin',
      middleware: [admin, small],
      body: advanceSchema,
      // The system clock's 422 comes before the body is read.
      rawBody: true,
      responses: { 200: clockAnswer },
    },
    async (c) => {
      if (control.clock.mode !== 'manual') control.clock.advance(0); // 422: explains the system clock
      const { ms } = await jsonBody(c, advanceSchema());
      control.clock.advance(ms);
      // Work the due timers started (a sample round, a restart) gets a turn before the answer.
      await new Promise((res) => setImmediate(res));
      return c.json(clockJson());
    },
  );

  return r;
}
