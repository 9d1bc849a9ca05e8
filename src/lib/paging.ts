/**
 * `Link: <…>; rel="next"` and `X-Next-Cursor` for the page after this one (contract section 4): the
 * request's own URL with `cursor` set, and without the parameters the cursor replaces (an export's
 * `page` or `after`). No headers on the last page.
 */
export function nextPageHeaders(
  requestUrl: string,
  nextCursor: string | null | undefined,
  replaces: readonly string[] = [],
): Record<string, string> {
  if (!nextCursor) return {};
  const url = new URL(requestUrl);
  for (const name of replaces) url.searchParams.delete(name);
  url.searchParams.set("cursor", nextCursor);
  return { Link: `<${url.toString()}>; rel="next"`, "X-Next-Cursor": nextCursor };
}
