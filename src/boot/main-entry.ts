// The `scalingo-emulator` command (dist/main.mjs, the package's bin and what `npm start` runs): it sets the command's V8
// options, then runs the bundle's CommonJS chunks (dist/main.cjs and the chunks it requires) through V8's code cache:
// node's own compile cache where node has one (`module.enableCompileCache`, Node ≥ 22.1), else src/boot/chunk-loader.ts.
// The cache's directory and how to turn it off: src/boot/code-cache-dir.ts. It must stay small and import node builtins
// only: everything it loads is compiled without a cache.
import * as nodeModule from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChunkLoader } from './chunk-loader.ts';
import { codeCacheDir } from './code-cache-dir.ts';
import { CodeCacheStore } from './code-cache-store.ts';
import { applyRuntimeV8Flags } from './v8-flags.ts';

applyRuntimeV8Flags();
const bundleDir = dirname(fileURLToPath(import.meta.url));
const cache = codeCacheDir(bundleDir);
if (cache.dir === null && !/^(off|0|false|no)$/i.test(process.env.EMULATOR_CODE_CACHE ?? '')) {
  process.emitWarning(`V8 code cache not used: ${cache.reason}`, { code: 'EMULATOR_CODE_CACHE' });
}
const enableCompileCache = (nodeModule as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
if (enableCompileCache && cache.dir) {
  enableCompileCache(cache.dir);
  nodeModule.createRequire(import.meta.url)('./main.cjs');
} else {
  new ChunkLoader(bundleDir, cache.dir ? new CodeCacheStore(cache.dir) : null).load('main.cjs');
}
