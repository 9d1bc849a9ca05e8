// Completes the generated `Env` (src/worker-configuration.d.ts) with what `wrangler types`
// cannot see from wrangler.toml.
declare namespace Cloudflare {
  interface Env {
    /** Postgres connection string: a secret in production, `--var`/`.dev.vars` locally. */
    DATABASE_URL: string;
  }
}
