import { Hono } from "hono";
import { html, raw } from "hono/html";
import { describeRoute } from "hono-openapi";
import type { AppEnv } from "../env";
import { ERROR_CODES, type ErrorCode, errorAnchor } from "../lib/errors";

/** `code` spans for the backticked words of a catalogue sentence (the text itself is escaped). */
function inlineCode(text: string) {
  const parts = text.split("`");
  return parts.map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : html`${part}`));
}

function errorEntry(code: ErrorCode) {
  const { status, title, meaning, remedy } = ERROR_CODES[code];
  return html`<section id="${errorAnchor(code)}">
  <h2>${status} ${title} <code>${code}</code></h2>
  <p>${inlineCode(meaning)}</p>
  <p><strong>What to do:</strong> ${inlineCode(remedy)}</p>
</section>`;
}

const STYLE =
  raw(`body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d2430}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:2rem}code{background:#f1f3f6;padding:0 .25em;border-radius:3px}
section:target{outline:3px solid #2f6feb;outline-offset:.5rem;border-radius:2px}`);

/**
 * `/docs/errors`: every problem `type` the API answers with resolves to an entry here (an anchor
 * per code), rendered from the same table the errors are made from.
 */
export const errorReference = new Hono<AppEnv>().get(
  "/docs/errors",
  describeRoute({
    operationId: "getErrorReference",
    summary: "What each problem type means",
    description: "An HTML page with one anchor per error code; each problem's `type` links to its entry.",
    tags: ["Service"],
    security: [],
    responses: { 200: { description: "HTML", content: { "text/html": { schema: { type: "string" } } } } },
  }),
  (c) => {
    const codes = Object.keys(ERROR_CODES) as ErrorCode[];
    c.header("Cache-Control", "public, max-age=3600");
    return c.html(html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Errors · Analytics read API</title><style>${STYLE}</style></head>
<body>
<h1>Errors</h1>
<p>Every error is an RFC 9457 <code>application/problem+json</code> document:
<code>type</code> links here, <code>code</code> names the entry, <code>detail</code> says what went wrong in
this request, <code>errors</code> points at each bad parameter and <code>requestId</code> identifies the request
in the logs. The whole API is described at <a href="/docs">/docs</a>.</p>
${codes.map(errorEntry)}
</body>
</html>`);
  },
);
