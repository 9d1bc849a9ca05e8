// What the global setup hands to both test tiers (`inject(...)`).
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    /** A second migrated database that stands in for a read replica. */
    replicaDatabaseUrl: string;
    /** A third migrated database, which a test disconnects in the middle of a streamed export. */
    faultsDatabaseUrl: string;
    relayProxy: string;
    /** PGlite has one session for all connections: tests that need two concurrent sessions skip. */
    embeddedDatabase: boolean;
    /** The end-to-end tier's Worker under `wrangler dev` on a seeded database (test/browser). */
    e2eBase: string;
  }
}
