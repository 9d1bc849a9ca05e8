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
