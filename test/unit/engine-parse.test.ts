import { describe, it, expect } from 'vitest';
import { frameDemuxer, demuxBuffer, lineSplitter, parseTimestampedLine } from '../../src/runtime/engine-parse.ts';

const frame = (type: 1 | 2, text: string) => {
  const payload = Buffer.from(text);
  const head = Buffer.alloc(8);
  head[0] = type;
  head.writeUInt32BE(payload.length, 4);
  return Buffer.concat([head, payload]);
};

describe('engine stream parsing', () => {
  const stream = Buffer.concat([
    frame(1, 'out-1\n'),
    frame(2, 'err-1\n'),
    frame(1, 'out-2 longer payload\n'),
    frame(1, ''),
  ]);

  it('demultiplexes frames whatever the chunk boundaries (inside headers, inside payloads)', () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const got: string[] = [];
      const d = frameDemuxer((s, data) => got.push(`${s}:${data.toString()}`));
      d.write(stream.subarray(0, cut));
      d.write(stream.subarray(cut));
      expect(got, `cut at ${cut}`).toEqual([
        'stdout:out-1\n',
        'stderr:err-1\n',
        'stdout:out-2 longer payload\n',
        'stdout:',
      ]);
    }
    // One byte at a time.
    const got: string[] = [];
    const d = frameDemuxer((s, data) => got.push(`${s}:${data.toString()}`));
    for (const b of stream) d.write(Buffer.from([b]));
    expect(got).toHaveLength(4);
    expect(demuxBuffer(stream).map((f) => f.stream)).toEqual(['stdout', 'stderr', 'stdout', 'stdout']);
  });

  it('splits lines across chunks and parses Docker timestamps', () => {
    const lines: string[] = [];
    const s = lineSplitter((l) => lines.push(l));
    s.write('2026-11-22T03:21:48.123456789Z hel');
    s.write('lo\r\n2026-11-22T03:21:49Z second\npartial');
    s.flush();
    expect(lines).toEqual(['2026-11-22T03:21:48.123456789Z hello', '2026-11-22T03:21:49Z second', 'partial']);
    expect(parseTimestampedLine(lines[0], 'stdout')).toEqual({
      time: Date.parse('2026-11-22T03:21:48.123Z'),
      timestamp: '2026-11-22T03:21:48.123456789Z',
      stream: 'stdout',
      text: 'hello',
    });
    expect(parseTimestampedLine('not a timestamp', 'stderr')).toBeNull();
  });
});
