/**
 * A page of ranked rows (`/pages`, a breakdown) as the answers from the bit strings give it: the
 * page's rows whole, and the one row past the page, which only tells that another page follows,
 * by its rank alone (its key and its sessions; its sums are not computed). The exact path's rows,
 * `all`, cut the same way: a test compares the two.
 */
export function rankedPage<Row extends { sessions: number }>(
  rows: readonly Row[],
  limit: number,
  rankOf: (row: Row) => Partial<Row>,
): { rows: Row[]; next: Partial<Row>[] } {
  return { rows: rows.slice(0, limit), next: rows.slice(limit, limit + 1).map(rankOf) };
}

/** A page row's rank: its page and title, and its sessions. */
export const pageRank = <
  Row extends { sessions: number; path: string | null; origin: string | null; title: string | null },
>(
  row: Row,
): Partial<Row> =>
  ({ path: row.path, origin: row.origin, title: row.title, sessions: row.sessions }) as Partial<Row>;

/** A breakdown row's rank: its value (and prefix, where the dimension has one), and its sessions. */
export const valueRank = <Row extends { sessions: number; name: string | null }>(row: Row): Partial<Row> =>
  ({
    name: row.name,
    sessions: row.sessions,
    ...("prefix" in row ? { prefix: row.prefix } : {}),
  }) as Partial<Row>;
