/** Runs tasks one after another, each after the one before has settled (whether it failed or not). */
export class SerialQueue<T> {
  private last: Promise<T> | undefined;

  /** The task running or waiting last; undefined once every task has settled. */
  get pending(): Promise<T> | undefined {
    return this.last;
  }

  run(task: () => Promise<T>): Promise<T> {
    const next = (this.last ?? Promise.resolve()).then(task, task);
    this.last = next;
    const clear = (): void => {
      if (this.last === next) this.last = undefined;
    };
    next.then(clear, clear);
    return next;
  }
}
