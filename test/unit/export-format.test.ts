import { describe, expect, it } from "vitest";
import { streamBatches } from "../../src/lib/export-format";

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

  it("a failure after the first bytes errors the stream, no error document; `finished` settles", async () => {
    const errors: unknown[] = [];
    const failure = new Error("connection terminated");
    let calls = 0;
    const stream = streamBatches({
      first: "row 1\n",
      next: async () => {
        calls++;
        if (calls === 1) return "row 2\n";
        throw failure;
      },
      onError: (error) => errors.push(error),
    });
    const reader = stream.body.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("row 1\n");
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("row 2\n");
    await expect(reader.read()).rejects.toBe(failure);
    await stream.finished;
    expect(errors).toEqual([failure]);
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
