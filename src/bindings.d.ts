// Completes the generated `Env` (worker-configuration.d.ts at the repository root) with what `wrangler types`
// cannot see from wrangler.toml.
declare namespace Cloudflare {
  interface Env {
    /** Postgres connection string: a secret in production, `--var`/`.dev.vars` locally. */
    DATABASE_URL: string;
  }
}
