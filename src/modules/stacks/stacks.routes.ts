import { ApiRoutes } from '../../http/api-routes.ts';
import { stackList } from './stacks.schemas.ts';

// Stacks are the emulator's configured local images (config `stacks`: id → image). The platform
// gives each an `st-…` id and a `scalingo-NN` name; here the config key is both, and it is what an
// app's `stack_id` holds (docs/fidelity.md).
const LISTED_SINCE = '2020-01-01T00:00:00.000Z';

/** `GET /v1/features/stacks` in go-scalingo's Stack shape; `scalingo stacks` and `stacks-set` read it. */
export function stacksRoutes(deps: { stacks: Record<string, string>; defaultStack: string }) {
  const r = new ApiRoutes('stacks');
  r.add(
    {
      method: 'get',
      path: '/v1/features/stacks',
      summary: 'List stacks (the configured local images)',
      responses: { 200: stackList },
    },
    (c) =>
      c.json({
        stacks: Object.entries(deps.stacks).map(([id, image]) => ({
          id,
          created_at: LISTED_SINCE,
          name: id,
          description: `${id} (local image ${image})`,
          base_image: image,
          default: id === deps.defaultStack,
          // go-scalingo reads a "2006-01-02" date or null.
          deprecated_at: null,
        })),
      }),
  );
  return r;
}
