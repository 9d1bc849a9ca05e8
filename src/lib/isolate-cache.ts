/**
 * A small map that forgets: entries live `ttlMs` in isolate memory, and the oldest entry goes when
 * the map is full. For facts that may be briefly stale (a verified client, a project's owner and
 * timezone) and cost a database round trip each time otherwise.
 */
export class IsolateCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1_000,
  ) {}

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: V): void {
    if (!this.#entries.has(key) && this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }
}

/**
 * Values in isolate memory bounded by their total size (the caller's measure, e.g. the length of
 * their JSON text), least recently used first out. A value larger than `entryMax` is not kept.
 */
export class SizedMemory<V> {
  readonly #entries = new Map<string, { value: V; size: number }>();
  #size = 0;

  constructor(
    private readonly budget: number,
    private readonly entryMax: number,
  ) {}

  /** Total size of the values held. */
  get size(): number {
    return this.#size;
  }

  get(key: string): V | undefined {
    const found = this.#entries.get(key);
    if (!found) return undefined;
    // Re-inserted so the map's order stays least recently used first.
    this.#entries.delete(key);
    this.#entries.set(key, found);
    return found.value;
  }

  set(key: string, value: V, size: number): void {
    this.delete(key);
    if (size > this.entryMax) return;
    for (const [oldest] of this.#entries) {
      if (this.#size + size <= this.budget) break;
      this.delete(oldest);
    }
    this.#entries.set(key, { value, size });
    this.#size += size;
  }

  delete(key: string): void {
    const found = this.#entries.get(key);
    if (!found) return;
    this.#entries.delete(key);
    this.#size -= found.size;
  }
}
