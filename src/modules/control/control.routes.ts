import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';
import { ApiError } from '../../http/errors.ts';
import { limitBody } from '../../http/middleware/json-only.ts';
import { jsonBody, readJson } from '../../http/validate.ts';
import { isoDate } from '../../shared/clock.ts';
import { requireAdmin } from './admin-auth.ts';
import { advanceSchema, resetSchema } from './control.schemas.ts';
import type { Control } from './control.ts';
import { SNAPSHOT_MAX_BYTES, snapshotJson } from './snapshots.ts';

// Control bodies are small JSON; a snapshot import is the raw SQLite file.
const JSON_LIMIT = 64 * 1024;

/**
 * The control plane: /_emulator/reset, snapshots, faults, clock. Every route needs the admin token
 * from a loopback peer (admin-auth.ts); /_emulator/health and /_emulator/billing stay public (their own routes).
 */
export function controlRoutes(deps: { control: Control; adminToken: () => string }) {
  const { control } = deps;
  const r = new Hono<AppEnv>();
  const admin = requireAdmin({ token: deps.adminToken });
  const small = limitBody(JSON_LIMIT);
  const clockJson = () => ({ clock: { mode: control.clock.mode, now: isoDate(control.clock.now()) } });

  r.post('/_emulator/reset', admin, small, async (c) => {
    const body = await jsonBody(c, resetSchema);
    await control.reset(body);
    return c.body(null, 204);
  });

  r.post('/_emulator/snapshots', admin, small, (c) => c.json({ snapshot: control.snapshot() }, 201));
  r.get('/_emulator/snapshots', admin, (c) => c.json({ snapshots: control.snapshots.list().map(snapshotJson) }));
  // Import: the body is a snapshot file, as GET /_emulator/snapshots/:id gave it.
  r.post('/_emulator/snapshots/restore', admin, limitBody(SNAPSHOT_MAX_BYTES), async (c) => {
    const data = Buffer.from(await c.req.arrayBuffer());
    if (!data.length) throw ApiError.invalid('snapshot', 'the body must be a snapshot file (application/vnd.sqlite3)');
    await control.restore(data);
    return c.body(null, 204);
  });
  r.get('/_emulator/snapshots/:id', admin, (c) => {
    const id = c.req.param('id');
    const data = control.snapshots.data(id);
    return c.body(new Uint8Array(data), 200, { 'content-type': 'application/vnd.sqlite3', 'content-disposition': `attachment; filename="${id}.sqlite"` });
  });
  r.post('/_emulator/snapshots/:id/restore', admin, small, async (c) => {
    await control.restore(control.snapshots.find(c.req.param('id')).id);
    return c.body(null, 204);
  });
  r.delete('/_emulator/snapshots/:id', admin, (c) => {
    control.snapshots.remove(c.req.param('id'));
    return c.body(null, 204);
  });

  r.post('/_emulator/faults', admin, small, async (c) => {
    const body = (await readJson(c)) as { fault?: unknown } | null;
    if (typeof body !== 'object' || body === null || typeof body.fault !== 'object' || body.fault === null || Array.isArray(body.fault)) throw ApiError.invalid('fault', 'missing field');
    return c.json({ fault: await control.faults.add(body.fault) }, 201);
  });
  r.get('/_emulator/faults', admin, (c) => c.json({ faults: control.faults.list() }));
  r.delete('/_emulator/faults/:id', admin, (c) => {
    control.faults.remove(c.req.param('id'));
    return c.body(null, 204);
  });
  r.delete('/_emulator/faults', admin, (c) => {
    control.faults.clear();
    return c.body(null, 204);
  });

  r.get('/_emulator/clock', admin, (c) => c.json(clockJson()));
  r.post('/_emulator/clock/advance', admin, small, async (c) => {
    if (control.clock.mode !== 'manual') control.clock.advance(0); // 422: explains the system clock
    const { ms } = await jsonBody(c, advanceSchema);
    control.clock.advance(ms);
    // Work the due timers started (a sample round, a restart) gets a turn before the answer.
    await new Promise((res) => setImmediate(res));
    return c.json(clockJson());
  });

  return r;
}
