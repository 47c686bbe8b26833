/**
 * A FIFO gate of n slots for one compaction: the planner's in-flight limit,
 * applied on top of the endpoint's own limiter (which other work shares).
 * A released slot passes straight to the next waiter, so none is taken twice.
 */
export class Gate {
  private used = 0;
  private readonly waiting: { go: () => void }[] = [];

  constructor(private readonly slots: number) {}

  async enter(signal?: AbortSignal): Promise<() => void> {
    if (this.used < this.slots && this.waiting.length === 0) this.used++;
    else {
      await new Promise<void>((resolve, reject) => {
        const w = { go: resolve };
        this.waiting.push(w);
        signal?.addEventListener(
          'abort',
          () => {
            const i = this.waiting.indexOf(w);
            if (i < 0) return;
            this.waiting.splice(i, 1);
            reject(new Error('Cancelled while waiting for a compaction slot.'));
          },
          { once: true },
        );
      });
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.waiting.shift();
      if (next) next.go();
      else this.used--;
    };
  }
}
