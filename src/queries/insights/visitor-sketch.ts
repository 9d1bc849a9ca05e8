/**
 * Distinct-visitor estimates from the HyperLogLog sketches of `visitor_sketches`,
 * `visitor_day_sketches` and `visitor_dimension_sketches` (src/db/routines/insert_visitor_sketches.sql):
 * 2^15 registers, each holding the position (1–49) of the lowest set bit in the 49 hash bits above
 * the register index (50 when none is set). A merged sketch is read as "how many registers are at
 * least k" for every plane k, which gives the register histogram the estimator needs.
 *
 * The estimator is Ertl's improved raw estimator ("New cardinality estimation algorithms for
 * HyperLogLog sketches", 2017, algorithm 6): unbiased over the whole range without empirical
 * bias tables, standard error about 1.04 / sqrt(2^15) = 0.57 %.
 */

import { SKETCH_REGISTER_BITS } from "../../db/schema";

export const SKETCH_REGISTERS = SKETCH_REGISTER_BITS;
/** Hash bits above the register index; register values run from 0 (empty) to this + 1. */
const VALUE_BITS = 64 - Math.log2(SKETCH_REGISTERS);

function sigma(x: number): number {
  if (x === 1) return Number.POSITIVE_INFINITY;
  let power = x;
  let weight = 1;
  let sum = x;
  for (;;) {
    power *= power;
    const before = sum;
    sum += power * weight;
    weight += weight;
    if (sum === before) return sum;
  }
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let root = x;
  let weight = 1;
  let sum = 1 - x;
  for (;;) {
    root = Math.sqrt(root);
    const before = sum;
    weight *= 0.5;
    sum -= (1 - root) ** 2 * weight;
    if (sum === before) return sum / 3;
  }
}

/**
 * The estimated number of distinct visitors of a merged sketch, from `atLeast[k]` = the number of
 * registers whose value is at least k (planes absent from the map have no register set).
 */
export function estimateVisitors(atLeast: ReadonlyMap<number, number>): number {
  const m = SKETCH_REGISTERS;
  const count = (k: number) => atLeast.get(k) ?? 0;
  if (count(1) === 0) return 0;
  // histogram[k] = registers whose value is exactly k
  const exactly = (k: number) => count(k) - count(k + 1);
  let z = m * tau(1 - count(VALUE_BITS + 1) / m);
  for (let k = VALUE_BITS; k >= 1; k--) z = 0.5 * (z + exactly(k));
  z += m * sigma((m - count(1)) / m);
  return Math.round(m ** 2 / (2 * Math.LN2) / z);
}
