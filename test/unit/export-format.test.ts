import { describe, expect, it } from "vitest";
import {
  attachmentFilename,
  csvCell,
  csvLine,
  type ExportFormat,
  negotiateExportFormat,
  streamBatches,
  streamFailureText,
} from "../../src/lib/export-format";

describe("the streamed body", () => {
  const read = async (body: ReadableStream<Uint8Array>) => {
    const reader = body.getReader();
    const chunks: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return chunks;
      chunks.push(new TextDecoder().decode(value));
    }
  };

  it("sends one batch per pull, skips empty batches and settles `finished` at the end", async () => {
    const batches = ["b1\n", "", "b2\n"];
    const errors: unknown[] = [];
    const stream = streamBatches({
      first: "header\n",
      next: async () => batches.shift(),
      onError: (error) => errors.push(error),
    });
    expect(await read(stream.body)).toEqual(["header\n", "b1\n", "b2\n"]);
    await stream.finished;
    expect(errors).toEqual([]);
  });

  /** Two rows, then a failing batch; with `record`, the stream's error record. */
  function failingStream(record?: (error: unknown) => string) {
    const errors: unknown[] = [];
    const failure = new Error("connection terminated");
    const batches = { calls: 0 };
    const stream = streamBatches({
      first: "row 1\n",
      next: async () => {
        batches.calls++;
        if (batches.calls === 1) return "row 2\n";
        throw failure;
      },
      onError: (error) => errors.push(error),
      failure: record,
    });
    const reader = stream.body.getReader();
    const decode = async () => new TextDecoder().decode((await reader.read()).value);
    return { stream, reader, decode, errors, failure, batches };
  }

  it("a failure after the first bytes errors the stream, no error document; `finished` settles", async () => {
    const { stream, reader, decode, errors, failure } = failingStream();
    expect(await decode()).toBe("row 1\n");
    expect(await decode()).toBe("row 2\n");
    await expect(reader.read()).rejects.toBe(failure);
    await stream.finished;
    expect(errors).toEqual([failure]);
  });

  it("a failure with an error record sends the record last, then errors the stream", async () => {
    const { stream, reader, decode, errors, failure, batches } = failingStream(
      (error) => `{"error":"${(error as Error).message}"}\n`,
    );
    expect(await decode()).toBe("row 1\n");
    expect(await decode()).toBe("row 2\n");
    expect(await decode()).toBe('{"error":"connection terminated"}\n');
    await expect(reader.read()).rejects.toBe(failure);
    await stream.finished;
    expect(errors).toEqual([failure]);
    expect(batches.calls).toBe(2);
  });

  it("an error record is one NDJSON line or one CSV row starting with #error", () => {
    const failure = {
      code: "DATABASE_UNAVAILABLE",
      status: 503,
      message: "The export failed, try again",
      requestId: "req-1",
      after: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
      cursor: "djE6MTox",
    };
    expect(streamFailureText("ndjson", failure)).toBe(
      '{"error":{"code":"DATABASE_UNAVAILABLE","status":503,"message":"The export failed, try again",' +
        '"requestId":"req-1","after":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","cursor":"djE6MTox"}}\n',
    );
    expect(streamFailureText("csv", failure)).toBe(
      '#error,DATABASE_UNAVAILABLE,503,"The export failed, try again",req-1,0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b,djE6MTox\r\n',
    );
    expect(streamFailureText("csv", { ...failure, after: null, cursor: null })).toMatch(/,req-1,,\r\n$/);
  });

  it("a client that goes away cancels it: `finished` settles and nothing more is read", async () => {
    let calls = 0;
    const stream = streamBatches({
      first: "first\n",
      next: async () => {
        calls++;
        return "more\n";
      },
      onError: () => {},
    });
    const reader = stream.body.getReader();
    await reader.read();
    await reader.cancel();
    await stream.finished;
    const settled = calls;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toBe(settled);
  });
});

describe("export format negotiation", () => {
  it("takes the format parameter over any Accept header", () => {
    expect(negotiateExportFormat("csv", "application/x-ndjson")).toBe("csv");
    expect(negotiateExportFormat("json", "text/csv")).toBe("json");
    expect(negotiateExportFormat("ndjson", undefined)).toBe("ndjson");
  });

  it("answers JSON without a format or an Accept header", () => {
    expect(negotiateExportFormat(undefined, undefined)).toBe("json");
    expect(negotiateExportFormat(undefined, "")).toBe("json");
  });

  const cases: Array<[accept: string, format: ExportFormat]> = [
    ["text/csv", "csv"],
    ["application/x-ndjson", "ndjson"],
    // The registered name of NDJSON, beside the x- form.
    ["application/ndjson", "ndjson"],
    ["application/json", "json"],
    ["TEXT/CSV", "csv"],
    ["text/csv; charset=utf-8", "csv"],
    // Highest quality wins; no q is 1.
    ["text/csv;q=0.5, application/x-ndjson;q=0.9", "ndjson"],
    ["text/csv;q=0.9, application/x-ndjson", "ndjson"],
    ["application/json;q=0.2, text/csv;q=0.3", "csv"],
    ["text/csv; charset=utf-8; q=0.4, application/json;q=0.3", "csv"],
    [" application/json ; q=0.9 ,text/csv;q=0.8", "json"],
    // q=0 means "not acceptable".
    ["text/csv;q=0", "json"],
    ["application/x-ndjson;q=0, text/csv;q=0.001", "csv"],
    ["text/csv;Q=0, application/ndjson;q=0.1", "ndjson"],
    ["text/csv;q=abc", "json"],
    // Ties keep the first listed.
    ["text/csv, application/x-ndjson", "csv"],
    ["application/x-ndjson, text/csv", "ndjson"],
    ["text/csv;q=0.5, application/ndjson;q=0.5", "csv"],
    ["application/ndjson;q=0.5, text/csv;q=0.5, application/json;q=0.5", "ndjson"],
    // Types the export does not speak are passed over; none at all is JSON, not an error.
    ["text/html, image/png", "json"],
    ["*/*", "json"],
    ["text/*", "json"],
    ["text/html, text/csv;q=0.1", "csv"],
    ["application/jsonx, text/csvx", "json"],
  ];

  it.each(cases)("Accept %j gives %s", (accept, format) => {
    expect(negotiateExportFormat(undefined, accept)).toBe(format);
  });
});

describe("CSV cells", () => {
  it("leaves null and undefined empty and quotes the empty string", () => {
    expect(csvCell(null)).toBe("");
    expect(csvCell(undefined)).toBe("");
    expect(csvCell("")).toBe('""');
  });

  it("writes plain text, numbers and booleans as they are", () => {
    expect(csvCell("screen_view")).toBe("screen_view");
    expect(csvCell(" spaced ")).toBe(" spaced ");
    expect(csvCell("a;b\tc")).toBe("a;b\tc");
    expect(csvCell(42)).toBe("42");
    expect(csvCell(0)).toBe("0");
    expect(csvCell(-1.5)).toBe("-1.5");
    expect(csvCell(false)).toBe("false");
  });

  it("quotes a comma, a quote, CR or LF, doubling the quotes", () => {
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('"')).toBe('""""');
    expect(csvCell("line 1\nline 2")).toBe('"line 1\nline 2"');
    expect(csvCell("a\rb")).toBe('"a\rb"');
    expect(csvCell("x\r\n")).toBe('"x\r\n"');
  });

  it.each([
    ['=HYPERLINK("http://evil.example","click")', '"\'=HYPERLINK(""http://evil.example"",""click"")"'],
    ["=1+1", '"\'=1+1"'],
    ["+cmd|' /C calc'!A0", "\"'+cmd|' /C calc'!A0\""],
    ["-2+3+cmd|' /C calc'!A0", "\"'-2+3+cmd|' /C calc'!A0\""],
    ["@SUM(A1:A2)", '"\'@SUM(A1:A2)"'],
    ["\t=1+1", '"\'\t=1+1"'],
    ["\r=1+1", '"\'\r=1+1"'],
    ["-", '"\'-"'],
    ["-->", '"\'-->"'],
  ])("neutralises text a spreadsheet would run as a formula: %j", (text, cell) => {
    expect(csvCell(text)).toBe(cell);
  });

  it("leaves plain numbers alone, signed ones included, and formula characters after the start", () => {
    expect(csvCell("-12")).toBe("-12");
    expect(csvCell("+3.5")).toBe("+3.5");
    expect(csvCell("-1e-3")).toBe("-1e-3");
    expect(csvCell(-7)).toBe("-7");
    expect(csvCell("/pricing?a=1")).toBe("/pricing?a=1");
    expect(csvCell("user@example.com")).toBe("user@example.com");
    expect(csvCell("a-b")).toBe("a-b");
  });

  it("writes objects as their JSON text, quoted when it needs it", () => {
    expect(csvCell({})).toBe("{}");
    expect(csvCell([])).toBe("[]");
    expect(csvCell({ a: 1 })).toBe('"{""a"":1}"');
    expect(csvCell({ a: 1, b: "x" })).toBe('"{""a"":1,""b"":""x""}"');
    expect(csvCell([1, 2])).toBe('"[1,2]"');
    expect(csvCell(["x"])).toBe('"[""x""]"');
  });

  it("joins a record with commas and ends it with CRLF", () => {
    expect(csvLine(["id", null, "", "a,b", 3, undefined])).toBe('id,,"","a,b",3,\r\n');
    expect(csvLine(["one"])).toBe("one\r\n");
    expect(csvLine([])).toBe("\r\n");
    expect(csvLine(['x"y', "multi\nline"])).toBe('"x""y","multi\nline"\r\n');
  });
});

describe("attachment filenames", () => {
  it("keeps letters, digits, dot, underscore and dash and adds the format", () => {
    expect(attachmentFilename("events-2026-11-21", "csv")).toBe("events-2026-11-21.csv");
    expect(attachmentFilename("Project_1.export", "ndjson")).toBe("Project_1.export.ndjson");
  });

  it("replaces every other character with an underscore", () => {
    expect(attachmentFilename('my export/ä"x', "csv")).toBe("my_export___x.csv");
    expect(attachmentFilename("a\\b;c\r\n", "ndjson")).toBe("a_b_c__.ndjson");
    expect(attachmentFilename("", "csv")).toBe(".csv");
  });
});
