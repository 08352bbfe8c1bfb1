/** Serializes async work: each `run` starts when the one before it has settled, in call order. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  /** Runs queued or running. */
  private queued = 0;

  /** Whether work holds the lock or waits for it: a `run` now would not start at once. */
  get busy(): boolean {
    return this.queued > 0;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    this.queued++;
    const result = this.tail.then(fn, fn);
    this.tail = result
      .catch(() => undefined)
      .finally(() => {
        this.queued--;
      });
    return result;
  }
}
