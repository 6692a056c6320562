import { describe, expect, it } from 'vitest';
import { demuxBuffer, frameDemuxer, lineSplitter, parseTimestampedLine } from '../../src/runtime/engine-parse.ts';

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
      const d = frameDemuxer((s, bytes, start, end) => got.push(`${s}:${bytes.toString('utf8', start, end)}`));
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
    const d = frameDemuxer((s, bytes, start, end) => got.push(`${s}:${bytes.toString('utf8', start, end)}`));
    for (const b of stream) d.write(Buffer.from([b]));
    expect(got).toHaveLength(4);
    expect(demuxBuffer(stream).map((f) => f.stream)).toEqual(['stdout', 'stderr', 'stdout', 'stdout']);
  });

  it('splits lines across chunks and parses Docker timestamps', () => {
    const lines: string[] = [];
    const s = lineSplitter((bytes, start, end) => lines.push(bytes.toString('utf8', start, end)));
    s.write(Buffer.from('2026-11-22T03:21:48.123456789Z hel'));
    s.write(Buffer.from('lo\r\n2026-11-22T03:21:49Z second\npartial'));
    s.flush();
    expect(lines).toEqual(['2026-11-22T03:21:48.123456789Z hello', '2026-11-22T03:21:49Z second', 'partial']);
    const parse = (text: string, stream: 'stdout' | 'stderr') => {
      const b = Buffer.from(text);
      return parseTimestampedLine(b, 0, b.length, stream);
    };
    expect(parse(lines[0], 'stdout')).toEqual({
      time: Date.parse('2026-11-22T03:21:48.123Z'),
      timestamp: '2026-11-22T03:21:48.123456789Z',
      stream: 'stdout',
      text: 'hello',
    });
    expect(parse('2026-11-22T03:21:49Z', 'stdout')).toMatchObject({ timestamp: '2026-11-22T03:21:49Z', text: '' });
    expect(parse('not a timestamp', 'stderr')).toBeNull();
  });

  it('a stream that never writes a newline is handed in lines of the longest length kept, never held whole', () => {
    const lines: string[] = [];
    const s = lineSplitter((bytes, start, end) => lines.push(bytes.toString('utf8', start, end)), 10);
    for (let i = 0; i < 5; i++) s.write(Buffer.from('abcdefg')); // 35 bytes, no newline
    expect(lines).toEqual(['abcdefgabc', 'defgabcdef', 'gabcdefgab']);
    s.write(Buffer.from('cd\nshort\n'));
    s.flush();
    expect(lines).toEqual(['abcdefgabc', 'defgabcdef', 'gabcdefgab', 'cdefgcd', 'short']);
  });

  it('hands each line as a range of the chunk, decodes a character cut between chunks whole, and keeps a range of a larger buffer apart', () => {
    const lines: string[] = [];
    const s = lineSplitter((bytes, start, end) => lines.push(bytes.toString('utf8', start, end)));
    const text = Buffer.from('2026-11-22T03:21:48Z été\nsecond\n');
    const cut = text.indexOf(0xa9); // inside the two bytes of "é"
    s.write(text.subarray(0, cut));
    s.write(text.subarray(cut));
    // A frame of a larger buffer: only start…end is read, whatever surrounds it.
    const framed = Buffer.from('xxxthird\nfourxxx');
    s.write(framed, 3, framed.length - 3);
    s.write(Buffer.from(' and more\n'));
    s.flush();
    expect(lines).toEqual(['2026-11-22T03:21:48Z été', 'second', 'third', 'four and more']);
    const b = Buffer.from('2026-11-22T03:21:48.5Z crème\r');
    expect(parseTimestampedLine(b, 0, b.length - 1, 'stderr')).toMatchObject({ text: 'crème', stream: 'stderr' });
  });
});
