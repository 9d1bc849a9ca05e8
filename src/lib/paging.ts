import * as v from "valibot";

/** The paging parameters and headers of the lists (the cursors themselves: cursors.ts). */

export const LimitParam = (defaultLimit: number, max = 1000) =>
  v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `limit must be a whole number from 1 to ${max}`),
      v.toNumber(),
      v.minValue(1, `limit must be from 1 to ${max}`),
      v.maxValue(max, `limit must be from 1 to ${max}`),
      v.description(
        `Rows per page, 1–${max} (default ${defaultLimit}). Larger values are refused, never clamped.`,
      ),
    ),
    String(defaultLimit),
  );

export const CursorParam = v.optional(
  v.pipe(
    v.string(),
    v.maxLength(200, "cursor is not one this API issued"),
    v.description("Opaque cursor from the previous page's `X-Next-Cursor` header (or its `Link: rel=next`)."),
  ),
);

/** `Link: <…>; rel="next"` and `X-Next-Cursor` for the page after this one (contract section 4). */
export function nextPageHeaders(requestUrl: string, nextCursor: string | undefined): Record<string, string> {
  if (!nextCursor) return {};
  const url = new URL(requestUrl);
  url.searchParams.set("cursor", nextCursor);
  return { Link: `<${url.toString()}>; rel="next"`, "X-Next-Cursor": nextCursor };
}
