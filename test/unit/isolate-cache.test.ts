import { describe, expect, it } from "vitest";
import { SizedMemory } from "../../src/lib/isolate-cache";

describe("SizedMemory (isolate copies of cached answers)", () => {
  it("keeps values within the budget, dropping the least recently used first", () => {
    const memory = new SizedMemory<string>(10, 10);
    memory.set("a", "A", 4);
    memory.set("b", "B", 4);
    // Reading a makes b the least recently used.
    expect(memory.get("a")).toBe("A");
    memory.set("c", "C", 4);
    expect(memory.get("b")).toBeUndefined();
    expect(memory.get("a")).toBe("A");
    expect(memory.get("c")).toBe("C");
    expect(memory.size).toBe(8);
  });

  it("drops as many old values as a large one needs", () => {
    const memory = new SizedMemory<string>(10, 10);
    memory.set("a", "A", 3);
    memory.set("b", "B", 3);
    memory.set("c", "C", 3);
    memory.set("d", "D", 9);
    expect([memory.get("a"), memory.get("b"), memory.get("c"), memory.get("d")]).toEqual([
      undefined,
      undefined,
      undefined,
      "D",
    ]);
    expect(memory.size).toBe(9);
  });

  it("does not keep a value larger than the entry limit, and forgets the key's older value", () => {
    const memory = new SizedMemory<string>(100, 10);
    memory.set("a", "small", 5);
    memory.set("a", "large", 11);
    expect(memory.get("a")).toBeUndefined();
    expect(memory.size).toBe(0);
  });

  it("replaces a key's value and counts only the new size", () => {
    const memory = new SizedMemory<string>(10, 10);
    memory.set("a", "one", 6);
    memory.set("a", "two", 7);
    expect(memory.get("a")).toBe("two");
    expect(memory.size).toBe(7);
    memory.delete("a");
    expect(memory.size).toBe(0);
  });
});
