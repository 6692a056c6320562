import { describe, expect, it } from 'vitest';
import { DRAIN_TRANSPORTS, type Transport } from '../../src/modules/drains/drain-transports.ts';
import { normaliseDrain } from '../../src/modules/drains/drain-types.ts';

// The registry of drain transports: each declared scheme chooses its transport, and only it; a
// transport added to DRAIN_TRANSPORTS is checked here without a line of this file changing.
const names = Object.keys(DRAIN_TRANSPORTS) as Transport[];
const syslogDrain = (host: string, port = '514') => ({
  type: 'syslog',
  token: 't',
  host,
  port,
  drain_region: '',
  url: '',
});

describe('DRAIN_TRANSPORTS', () => {
  it('no scheme or port is declared by two transports; schemes are lower case', () => {
    const schemes = names.flatMap((n) => DRAIN_TRANSPORTS[n].schemes);
    const ports = names.flatMap((n) => DRAIN_TRANSPORTS[n].ports ?? []);
    expect(new Set(schemes).size).toBe(schemes.length);
    expect(new Set(ports).size).toBe(ports.length);
    for (const s of schemes) expect(s).toBe(s.toLowerCase());
  });

  it.each(names.flatMap((n) => DRAIN_TRANSPORTS[n].schemes.map((s) => [s, n])))(
    'the scheme %s:// chooses %s, in any case; the host is stored without it',
    (scheme, name) => {
      for (const written of [scheme, scheme.toUpperCase()]) {
        const d = normaliseDrain(syslogDrain(`${written}://127.0.0.1`), 'network');
        expect(d.transport).toBe(name);
        expect(d.host).toBe('127.0.0.1');
      }
    },
  );

  it('without a scheme: a declared port chooses its transport, else tcp; an unknown scheme is no host', () => {
    expect(normaliseDrain(syslogDrain('127.0.0.1', '6514'), 'network').transport).toBe('tls');
    expect(normaliseDrain(syslogDrain('127.0.0.1', '514'), 'network').transport).toBe('tcp');
    expect(() => normaliseDrain(syslogDrain('gopher://127.0.0.1'), 'network')).toThrow(/host/);
  });

  it('a network transport writes to the drain file in the file mode and for types without an endpoint', () => {
    const fileMode = normaliseDrain(syslogDrain('udp://127.0.0.1'), 'file');
    expect(fileMode.transport).toBe('file');
    // The url still shows the transport asked for.
    expect(fileMode.url).toBe('syslog+udp://:t@127.0.0.1:514');
    const datadog = { type: 'datadog', token: 'd', host: '', port: '', drain_region: 'eu', url: '' };
    expect(normaliseDrain(datadog, 'network').transport).toBe('file');
  });
});
