/**
 * What one request spent waiting on the database: the sum and count of its queries' round trips,
 * for the `Server-Timing` header and the request log line (src/middleware/request-log.ts).
 * Workers advance the clock only across I/O, so the time measured around a query is its round
 * trip, not CPU.
 */
export class RequestTiming {
  databaseMs = 0;
  queries = 0;

  recordQuery(ms: number): void {
    this.databaseMs += ms;
    this.queries += 1;
  }
}
