import { z } from 'zod';

/** The signature of a pre-authenticated source URL (as POST /v1/sources wrote it). */
export const signedQuery = z.object({ token: z.string(), timestamp: z.string() });

// ---- Answers ----

/** The Source resource (sources.service.ts `create`): where to PUT the archive and where it is read from. */
export const sourceResource = z.object({ upload_url: z.string(), download_url: z.string() }).meta({ id: 'Source' });
export const sourceEnvelope = z.object({ source: sourceResource });
/** PUT <upload_url>: the bytes kept. */
export const uploadAnswer = z.object({ size: z.number().int() });
