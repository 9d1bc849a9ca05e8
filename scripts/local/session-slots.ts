/**
 * The relay's cap on Postgres sessions (scripts/local/relay.ts): a counting semaphore whose
 * waiters are served in arrival order, as a connection pooler queues its clients.
 */
export class SessionSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves once a slot is the caller's; `cancel` leaves the queue (the client went away). */
  acquire(): { granted: Promise<void>; cancel(): void } {
    if (this.#free > 0) {
      this.#free--;
      return { granted: Promise.resolve(), cancel: () => {} };
    }
    let grant: () => void = () => {};
    const granted = new Promise<void>((resolve) => {
      grant = resolve;
    });
    this.#waiting.push(grant);
    return {
      granted,
      cancel: () => {
        const index = this.#waiting.indexOf(grant);
        if (index >= 0) this.#waiting.splice(index, 1);
      },
    };
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }

  /** Connections waiting for a slot. */
  get queued(): number {
    return this.#waiting.length;
  }
}
