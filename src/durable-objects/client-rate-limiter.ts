import { DurableObject } from "cloudflare:workers";

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

/**
 * One instance per API client (named by its id), so every request of a client is counted in one
 * place whichever isolate or location serves it. A fixed 10 s window held in memory: if the
 * instance is evicted the count restarts, which errs on the side of letting requests through.
 */
export class ClientRateLimiter extends DurableObject {
  private windowStart = 0;
  private count = 0;

  hit(limit: number, windowMs: number, now = Date.now()): RateLimitDecision {
    if (now - this.windowStart >= windowMs) {
      this.windowStart = now;
      this.count = 0;
    }
    const resetSeconds = Math.max(1, Math.ceil((this.windowStart + windowMs - now) / 1000));
    if (this.count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    this.count++;
    return { allowed: true, limit, remaining: limit - this.count, resetSeconds };
  }
}
