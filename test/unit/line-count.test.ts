import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.ts';
import { lineCount } from '../../src/http/validate.ts';

// The one parser of the `n` query parameter (app logs, an addon's logs, an addon server's output).
describe('lineCount (the `n` query parameter)', () => {
  it('absent or empty is undefined (the route picks its default); a whole number is capped at the maximum', () => {
    expect(lineCount(undefined, 500)).toBeUndefined();
    expect(lineCount('', 500)).toBeUndefined();
    expect(lineCount('0', 500)).toBe(0);
    expect(lineCount('42', 500)).toBe(42);
    expect(lineCount('999999999', 500)).toBe(500);
  });

  it.each(['-1', '1.5', 'ten', '1e3', '1234567890', ' 5'])('%j is a 400 naming it', (raw) => {
    const err = (() => {
      try {
        lineCount(raw, 500);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, message: `invalid n "${raw}": it must be a whole number of lines` });
  });
});
