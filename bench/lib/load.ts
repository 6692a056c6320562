import autocannon from 'autocannon';
import { withCpu } from './cpu.ts';
import { percentile } from './stats.ts';

/** One autocannon run's figures; requests that were not 2xx or failed are counted, never hidden. */
export interface LoadFigures {
  reqPerSec: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Server CPU time per answered request (µs), null when it cannot be read. */
  serverCpuUsPerReq: number | null;
  /** Share of one core used by the server and by the load generator during the measured run. */
  serverCpuShare: number | null;
  clientCpuShare: number;
}

export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  connections: number;
  durationS: number;
  warmupS: number;
  /** The server's process id, to read the CPU time it spent. */
  serverPid?: number;
}

interface Fired {
  result: autocannon.Result;
  latencies: number[];
}

function fire(url: string, headers: Record<string, string>, connections: number, durationS: number): Promise<Fired> {
  // autocannon's own histogram keeps whole milliseconds; the response events carry the exact time,
  // so percentiles are computed from those (2xx only, as autocannon does).
  const latencies: number[] = [];
  return new Promise((ok, fail) => {
    const instance = autocannon({ url, headers, connections, duration: durationS, pipelining: 1 }, (err, result) =>
      err ? fail(err) : ok({ result, latencies }),
    );
    instance.on('response', (_client, statusCode: number, _bytes: number, responseTime: number) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

/** A warm-up (JIT, caches, keep-alive sockets), then the measured run with the same settings. */
export async function hammer(o: LoadOptions): Promise<LoadFigures> {
  const headers = o.headers ?? {};
  if (o.warmupS > 0) await fire(o.url, headers, o.connections, o.warmupS);
  const m = await withCpu(o.serverPid, () => fire(o.url, headers, o.connections, o.durationS));
  const { result: r, latencies } = m.value;
  return {
    // Total over the measured window rather than the mean of per-second samples.
    reqPerSec: r.requests.total / r.duration,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.reduce((a, b) => Math.max(b, a), 0),
    total: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    serverCpuUsPerReq: m.serverCpuMs === null ? null : (m.serverCpuMs * 1000) / r.requests.total,
    serverCpuShare: m.serverCpuMs === null ? null : m.serverCpuMs / m.wallMs,
    clientCpuShare: m.clientCpuMs / m.wallMs,
  };
}
