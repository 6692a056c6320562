/**
 * A bounded async queue feeding a `for await` consumer from a push-based source. When more than
 * `highWater` items wait, `onPressure(true)` asks the source to pause; it resumes below lowWater.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | null = null;
  private ended = false;
  private paused = false;

  constructor(private readonly opts: { highWater?: number; onPressure?: (paused: boolean) => void } = {}) {}

  push(item: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: item, done: false });
      return;
    }
    this.items.push(item);
    const high = this.opts.highWater ?? 10_000;
    if (!this.paused && this.items.length >= high) {
      this.paused = true;
      this.opts.onPressure?.(true);
    }
  }

  end(): void {
    this.ended = true;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: undefined as never, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length) {
          const value = this.items.shift()!;
          if (this.paused && this.items.length <= (this.opts.highWater ?? 10_000) / 2) {
            this.paused = false;
            this.opts.onPressure?.(false);
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.ended) return Promise.resolve({ value: undefined as never, done: true });
        return new Promise((resolve) => (this.waiting = resolve));
      },
      return: () => {
        this.end();
        this.items = [];
        return Promise.resolve({ value: undefined as never, done: true });
      },
    };
  }
}
