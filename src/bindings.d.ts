// Completes the generated `Env` (worker-configuration.d.ts at the repository root) with what `wrangler types`
// cannot see from wrangler.toml.
declare namespace Cloudflare {
  interface Env {
    /** Postgres connection string: a secret in production, `--var`/`.dev.vars` locally. */
    DATABASE_URL: string;
    /**
     * Optional read replica (a Neon read replica's connection string, a secret like DATABASE_URL):
     * when set, every API request reads it; the cron refresh and migrations stay on DATABASE_URL.
     */
    DATABASE_REPLICA_URL?: string;
    /**
     * Optional secret that signs cursors (HMAC-SHA-256). Without it the key is derived from
     * DATABASE_URL; set it to rotate cursors on their own. Rotating invalidates cursors in flight.
     */
    CURSOR_SECRET?: string;
  }
}
