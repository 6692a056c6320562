/** What a consumed slot holds until compaction: the item itself is let go at once (memory). */
const TAKEN: unique symbol = Symbol('taken');

/**
 * A bounded async queue feeding a `for await` consumer from a push-based source. When more than
 * `highWater` items wait, `onPressure(true)` asks the source to pause; it resumes below lowWater.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  // A ring-free queue: items[head…] are pending; the array is compacted when half is consumed,
  // so taking an item is O(1) amortised (Array#shift is O(n): quadratic on a large backlog).
  private items: (T | typeof TAKEN)[] = [];
  private head = 0;
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
    if (!this.paused && this.pending() >= high) {
      this.paused = true;
      this.opts.onPressure?.(true);
    }
  }

  private pending(): number {
    return this.items.length - this.head;
  }

  private take(): T {
    const value = this.items[this.head];
    this.items[this.head++] = TAKEN;
    // Only called while pending() > 0: the slot at head always holds an item.
    if (value === TAKEN) throw new Error('AsyncQueue: took a consumed slot');
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return value;
  }

  /** Every item waiting now, without waiting: a consumer that got one item takes the rest of a burst at once. */
  takeWaiting(): T[] {
    if (!this.pending()) return [];
    // Items from head on are never TAKEN (only consumed slots before head are marked).
    const out = (this.head ? this.items.slice(this.head) : this.items) as T[];
    this.items = [];
    this.head = 0;
    if (this.paused) {
      this.paused = false;
      this.opts.onPressure?.(false);
    }
    return out;
  }

  end(): void {
    this.ended = true;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.pending()) {
          const value = this.take();
          if (this.paused && this.pending() <= (this.opts.highWater ?? 10_000) / 2) {
            this.paused = false;
            this.opts.onPressure?.(false);
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiting = resolve));
      },
      return: () => {
        this.end();
        this.items = [];
        this.head = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
