import { ApiRoutes } from '../../http/api-routes.ts';
import { billingAnswer } from './health.schemas.ts';

/** Pages the emulator links to from the API's answers (e.g. the 402's `url`). */
export function emulatorRoutes() {
  const r = new ApiRoutes('emulator');
  r.add(
    {
      method: 'get',
      path: '/_emulator/billing',
      summary: 'Billing explained (the 402 answers link here)',
      auth: 'public',
      responses: { 200: billingAnswer },
    },
    (c) =>
      c.json({
        billing:
          'The emulator has no billing. A user without a payment method is held to the free-trial limits (1 app, 1 S or M web container).',
        how_to_lift: 'Set "paymentMethod": true for the user in emulator.config.json and restart the emulator.',
      }),
  );
  return r;
}
