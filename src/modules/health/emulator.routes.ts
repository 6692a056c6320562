import { Hono } from 'hono';
import type { AppEnv } from '../../http/env.ts';

/** Pages the emulator links to from the API's answers (e.g. the 402's `url`). */
export function emulatorRoutes() {
  const r = new Hono<AppEnv>();
  r.get('/_emulator/billing', (c) =>
    c.json({
      billing: 'The emulator has no billing. A user without a payment method is held to the free-trial limits (1 app, 1 S or M web container).',
      how_to_lift: 'Set "paymentMethod": true for the user in emulator.config.json and restart the emulator.',
    }),
  );
  return r;
}
