import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Script } from 'node:vm';
import { type CodeCacheStore } from './code-cache-store.ts';

interface ChunkModule {
  exports: unknown;
  id: string;
  filename: string;
  loaded: boolean;
}

/** What a loader did, for tests and benchmarks: chunks compiled from their cache, without one, and cache files written. */
export interface ChunkLoaderStats {
  fromCache: string[];
  compiled: string[];
  written: string[];
}

/** How long after the last chunk compiled without its cache the cache is written (the start's functions compiled by then). */
const WRITE_DELAY_MS = 1000;

/**
 * Loads the bundle's CommonJS chunks (dist/*.cjs, scripts/build.mjs) through V8's code cache on Node versions without
 * `module.enableCompileCache` (before 22.1): each chunk is compiled by a `vm.Script` given the cache data an earlier
 * start wrote, which spares V8 parsing and compiling the functions it had compiled then. A chunk loaded without usable
 * data (none, stale or rejected by V8) is compiled as usual; a second after the last such chunk, and at exit, its data
 * is written with the functions compiled since (`script.createCachedData()`), so the next start gets what this one ran.
 *
 * The chunks `require('./chunk-….cjs')` each other (static imports, and `import()` of the lazy ones); anything else
 * (node builtins, better-sqlite3, ssh2) goes to node's own `require`. Nothing global is patched.
 */
export class ChunkLoader {
  readonly stats: ChunkLoaderStats = { fromCache: [], compiled: [], written: [] };
  private readonly modules = new Map<string, ChunkModule>();
  private readonly nodeRequire: NodeJS.Require;
  private readonly unwritten = new Map<string, { source: Buffer; script: Script }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly bundleDir: string,
    private readonly store: CodeCacheStore | null,
  ) {
    this.nodeRequire = createRequire(join(bundleDir, 'main.cjs'));
    if (store) process.once('exit', () => this.writeCache());
  }

  /** Runs a chunk of the bundle (its path in dist/, e.g. `main.cjs`, `vendor/jose.cjs`) and returns its exports. */
  load(chunk: string): unknown {
    const known = this.modules.get(chunk);
    if (known) return known.exports;
    const filename = join(this.bundleDir, chunk);
    const module: ChunkModule = { exports: {}, id: filename, filename, loaded: false };
    this.modules.set(chunk, module);
    try {
      const run = this.compile(chunk, filename) as (...args: unknown[]) => void;
      run.call(module.exports, module.exports, this.requireFor(dirname(filename)), module, filename, dirname(filename));
    } catch (err) {
      // As node's own loader: a chunk whose code failed is not kept half-run, so a later load tries it again.
      this.modules.delete(chunk);
      throw err;
    }
    module.loaded = true;
    return module.exports;
  }

  private compile(chunk: string, filename: string): unknown {
    // The wrapper is part of the cached text: it must stay the same from one start to the next.
    const source = readFileSync(filename);
    const cachedData = this.store?.read(chunk, source) ?? undefined;
    const script = new Script(
      `(function (exports, require, module, __filename, __dirname) { ${source.toString()}\n})`,
      { filename, cachedData },
    );
    if (cachedData && !script.cachedDataRejected) this.stats.fromCache.push(chunk);
    else {
      this.stats.compiled.push(chunk);
      if (this.store) this.scheduleWrite(chunk, source, script);
    }
    return script.runInThisContext();
  }

  /** The `require` of the chunks in `dir`: the bundle's own chunks by this loader (one instance each), the rest by node. */
  private requireFor(dir: string): NodeJS.Require {
    const require = ((id: string) =>
      /^\.\.?\//.test(id) && id.endsWith('.cjs')
        ? this.load(relative(this.bundleDir, resolve(dir, id)).split(sep).join('/'))
        : this.nodeRequire(id)) as NodeJS.Require;
    return Object.assign(require, {
      resolve: this.nodeRequire.resolve,
      cache: this.nodeRequire.cache,
      main: this.nodeRequire.main,
    });
  }

  private scheduleWrite(chunk: string, source: Buffer, script: Script): void {
    this.unwritten.set(chunk, { source, script });
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.writeCache(), WRITE_DELAY_MS).unref();
  }

  /** Writes the cache of every chunk compiled without it; a failure only costs the next start its cache. */
  writeCache(): void {
    clearTimeout(this.timer);
    if (!this.store || this.unwritten.size === 0) return;
    for (const [chunk, { source, script }] of this.unwritten) {
      this.store.write(chunk, source, script.createCachedData());
      this.stats.written.push(chunk);
    }
    this.unwritten.clear();
    try {
      this.store.sweep((chunk) => existsSync(join(this.bundleDir, chunk)));
    } catch {
      // an unreadable directory: its files stay
    }
  }
}
