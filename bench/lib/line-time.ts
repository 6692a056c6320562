// When a log line was written, from the timestamp it starts with (the logs and many-apps sections).

/**
 * Epoch ms (with the sub-millisecond digits) of a line starting `YYYY-MM-DD?HH:MM:SS[.fraction]`:
 * the emulator's Go-style time (space, trailing zeros trimmed) and Docker's RFC 3339 Nano (T…Z)
 * alike. The whole-second part is cached: consecutive lines almost always share it.
 */
let cachedSecond = '';
let cachedMs = 0;
export function lineTimeMs(line: string): number {
  const second = line.slice(0, 19);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedMs = Date.UTC(
      +line.slice(0, 4),
      +line.slice(5, 7) - 1,
      +line.slice(8, 10),
      +line.slice(11, 13),
      +line.slice(14, 16),
      +line.slice(17, 19),
    );
  }
  if (line.charCodeAt(19) !== 46 /* . */) return cachedMs;
  let end = 20;
  while (end < line.length && line.charCodeAt(end) >= 48 && line.charCodeAt(end) <= 57) end++;
  return cachedMs + Number(`0.${line.slice(20, end)}`) * 1000;
}
