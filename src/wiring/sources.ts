// Uploaded sources (`scalingo deploy <archive>`): signed upload/download URLs, files in <state dir>/sources,
// swept of expired uploads at start and on a timer.
import { join } from 'node:path';
import { createUrlSigner } from '../modules/logs/logs-url.ts';
import { sourcesRoutes } from '../modules/sources/sources.routes.ts';
import { createSourcesService } from '../modules/sources/sources.service.ts';
import { createSourcesStore } from '../modules/sources/sources.store.ts';
import { loadSecretKey } from '../shared/secrets.ts';
import { type Unit } from './area.ts';
import { defineArea } from './define-area.ts';

export const sourcesArea = defineArea({
  name: 'sources',
  folders: ['sources'],
  needs: [],
  build(shared) {
    const { config, clock, logger } = shared;
    const sources = createSourcesService({
      store: createSourcesStore(shared.db),
      signer: createUrlSigner({ key: loadSecretKey(shared.dataDir, 'sources.key'), clock }),
      clock,
      logger,
      dir: join(shared.stateDir, 'sources'),
      apiUrl: () => shared.urls().api,
      maxBytes: config.sources.maxArchiveBytes,
      ttlMs: config.sources.uploadTtlMs,
    });
    let sweep: NodeJS.Timeout | undefined;
    const unit: Unit = {
      name: 'sources',
      routes: [sourcesRoutes({ sources })],
      async start() {
        await sources.sweep();
        const sweepOnce = () => void sources.sweep().catch((err) => logger.warn({ err }, 'sources: sweep failed'));
        sweep = setInterval(sweepOnce, config.sources.uploadSweepMs);
        sweep.unref();
      },
      stop: () => clearInterval(sweep),
    };
    return { api: { sources }, units: [unit] };
  },
});
