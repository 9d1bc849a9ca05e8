import pg from "pg";

/**
 * The block size of the per-day session strings in the test databases (session_block_bits(),
 * src/db/routines/session_block_bits.sql): 8,192 in production, so a fixture's days, of 75 to 90
 * sessions in the differential tests, would each be one block. At 40 (whole bytes, not a power of
 * two) they span two or three, so every test of the strings also tests the blocks: a day's last
 * block shorter than the others, a filter kept in some blocks of a day only, a refresh writing
 * only some blocks. Smaller blocks cost the large fixtures' refreshes more rows (at 24, the
 * 50,000 sessions of the statement-timeout test took 40 % longer to build than at 8,192).
 */
export const TEST_SESSION_BLOCK_BITS = 40;

/** Has the migrated database at `connectionString` cut its session strings into test blocks. */
export async function useTestSessionBlocks(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(
      `CREATE OR REPLACE FUNCTION session_block_bits() RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE
       AS $fn$ SELECT ${TEST_SESSION_BLOCK_BITS} $fn$`,
    );
  } finally {
    await client.end();
  }
}
