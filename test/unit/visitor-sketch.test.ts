import { describe, expect, it } from "vitest";
import { estimateVisitors, SKETCH_REGISTERS } from "../../src/queries/insights/visitor-sketch";

// The sketches are built here from the layout the module documents (and insert_visitor_sketches.sql
// writes): 2^15 registers, the register index in the low 15 bits of a 64-bit hash, its value the
// 1-based position of the lowest set bit of the next 49 bits (50 when none is set).

const MASK_64 = (1n << 64n) - 1n;
const INDEX_BITS = 15n;
const INDEX_MASK = (1n << INDEX_BITS) - 1n;
const VALUE_MASK = (1n << 49n) - 1n;
const NO_BIT_VALUE = 50;

/** splitmix64: a seeded stream of 64-bit values, all distinct (a bijection of a counter). */
function splitmix64(seed: bigint): () => bigint {
  let state = seed & MASK_64;
  return () => {
    state = (state + 0x9e3779b97f4a7c15n) & MASK_64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64;
    return z ^ (z >> 31n);
  };
}

/** The register histogram of some 64-bit hashes: atLeast[k] = registers whose value is ≥ k. */
function sketchOf(hashes: Iterable<bigint>): Map<number, number> {
  const registers = new Uint8Array(2 ** 15);
  for (const hash of hashes) {
    const index = Number(hash & INDEX_MASK);
    let rest = (hash >> INDEX_BITS) & VALUE_MASK;
    let value = NO_BIT_VALUE;
    if (rest !== 0n) {
      value = 1;
      while ((rest & 1n) === 0n) {
        rest >>= 1n;
        value++;
      }
    }
    registers[index] = Math.max(registers[index] ?? 0, value);
  }
  const atLeast = new Map<number, number>();
  for (let k = 1; k <= NO_BIT_VALUE; k++) {
    const count = registers.reduce((total, value) => total + (value >= k ? 1 : 0), 0);
    // Like the stored planes: a plane with no register set is absent.
    if (count > 0) atLeast.set(k, count);
  }
  return atLeast;
}

function* randomHashes(count: number, seed: bigint): Generator<bigint> {
  const next = splitmix64(seed);
  for (let i = 0; i < count; i++) yield next();
}

/** A hash with the given register index and the 49 value bits above it. */
const hashAt = (index: number, valueBits: bigint) => (valueBits << INDEX_BITS) | BigInt(index);

describe("the sketch builder written for these tests", () => {
  it("places a hash by its low 15 bits and values it by the lowest set bit above them", () => {
    // Register 5, value bits ...1000: lowest set bit at position 4.
    expect(sketchOf([hashAt(5, 8n)])).toEqual(new Map([1, 2, 3, 4].map((k) => [k, 1])));
    // No bit set in the 49 value bits gives 50; a bit above them (here bit 64) is not read.
    expect(sketchOf([hashAt(7, 1n << 49n)]).get(50)).toBe(1);
    // Two hashes in one register keep the larger value.
    expect(sketchOf([hashAt(1, 1n), hashAt(1, 4n)])).toEqual(
      new Map([
        [1, 1],
        [2, 1],
        [3, 1],
      ]),
    );
  });

  it("gives splitmix64's published first output for seed 0", () => {
    expect(splitmix64(0n)().toString(16)).toBe("e220a8397b1dcdaf");
  });
});

describe("estimateVisitors", () => {
  it("has 2^15 registers", () => {
    expect(SKETCH_REGISTERS).toBe(32_768);
  });

  it("is 0 for an empty sketch", () => {
    expect(estimateVisitors(new Map())).toBe(0);
    expect(estimateVisitors(new Map([[1, 0]]))).toBe(0);
  });

  it("is exactly 1 for one distinct value, whatever its register value", () => {
    expect(estimateVisitors(sketchOf([hashAt(0, 1n)]))).toBe(1);
    expect(estimateVisitors(sketchOf([hashAt(32_767, 1n << 20n)]))).toBe(1);
    expect(estimateVisitors(sketchOf([hashAt(123, 0n)]))).toBe(1);
    const one = sketchOf(randomHashes(1, 7n));
    expect(estimateVisitors(one)).toBe(1);
    // The same visitor seen again changes nothing.
    expect(estimateVisitors(sketchOf([...randomHashes(1, 7n), ...randomHashes(1, 7n)]))).toBe(1);
  });

  it("counts a handful of visitors in distinct registers exactly", () => {
    const hashes = [0, 1, 2, 3, 4].map((index) => hashAt(index * 1000, 1n));
    expect(estimateVisitors(sketchOf(hashes))).toBe(5);
  });

  it.each([
    [1_000, 1n],
    [50_000, 2n],
    [200_000, 3n],
  ])("estimates %i distinct visitors within 2 %%", (count, seed) => {
    const estimate = estimateVisitors(sketchOf(randomHashes(count, seed)));
    expect(Math.abs(estimate - count) / count).toBeLessThanOrEqual(0.02);
  });

  it("grows with the number of visitors", () => {
    const small = estimateVisitors(sketchOf(randomHashes(10_000, 4n)));
    const large = estimateVisitors(sketchOf(randomHashes(100_000, 4n)));
    expect(large).toBeGreaterThan(small * 9);
    expect(large).toBeLessThan(small * 11);
  });
});
