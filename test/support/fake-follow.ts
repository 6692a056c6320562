// A follow stream of the fake runtimes: lines pushed by the fake, ended by an exit or a cut.
import { type LogLine } from '../../src/runtime/runtime.ts';

export class Follow implements AsyncIterable<LogLine> {
  private items: LogLine[] = [];
  private waiter: ((r: IteratorResult<LogLine>) => void) | null = null;
  ended = false;
  constructor(private readonly onClose: () => void) {}
  push(l: LogLine) {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: l, done: false });
    } else this.items.push(l);
  }
  end() {
    this.ended = true;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w({ value: undefined as never, done: true });
    }
  }
  close() {
    this.end();
    this.onClose();
  }
  [Symbol.asyncIterator](): AsyncIterator<LogLine> {
    return {
      next: () => {
        if (this.items.length) return Promise.resolve({ value: this.items.shift()!, done: false });
        if (this.ended) return Promise.resolve({ value: undefined as never, done: true });
        return new Promise((r) => (this.waiter = r));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined as never, done: true });
      },
    };
  }
}
