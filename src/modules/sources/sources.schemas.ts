import { z } from 'zod';
import { lazySchema } from '../../http/api-schemas.ts';

// ---- Answers ----

/** The Source resource (sources.service.ts `create`): where to PUT the archive and where it is read from. */
export const sourceResource = lazySchema(() =>
  z.object({ upload_url: z.string(), download_url: z.string() }).meta({ id: 'Source' }),
);
export const sourceEnvelope = lazySchema(() => z.object({ source: sourceResource() }));
/** PUT <upload_url>: the bytes kept. */
export const uploadAnswer = lazySchema(() => z.object({ size: z.number().int() }));
