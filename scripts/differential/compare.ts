/**
 * What may differ between the pre-aggregated answer and the exact path's (differential.ts): the
 * list `meta.approximate` itself, and a number under a key it names, within ±2 % (visitors counted
 * from sketches, contract: metric definitions). Everything else must be equal, value for value.
 */

const TOLERANCE = 0.02;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function approximateKeys(answer: Json): Set<string> {
  if (answer === null || typeof answer !== "object" || Array.isArray(answer)) return new Set();
  const meta = answer.meta;
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return new Set();
  const list = meta.approximate;
  return new Set(Array.isArray(list) ? list.filter((item): item is string => typeof item === "string") : []);
}

/** Where the two answers differ beyond what is allowed, as `path: fast ≠ exact` lines. */
export function answerDifferences(fast: Json, exact: Json): string[] {
  const approximate = approximateKeys(fast);
  const differences: string[] = [];
  const walk = (a: Json, b: Json, where: string, key: string) => {
    if (where === "meta.approximate") return;
    if (typeof a === "number" && typeof b === "number") {
      if (a === b) return;
      const allowed =
        approximate.has(key) && Math.abs(a - b) <= TOLERANCE * Math.max(Math.abs(a), Math.abs(b));
      if (!allowed) differences.push(`${where}: ${a} ≠ ${b}`);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) differences.push(`${where}: ${a.length} items ≠ ${b.length}`);
      for (let i = 0; i < Math.min(a.length, b.length); i++)
        walk(a[i] as Json, b[i] as Json, `${where}[${i}]`, key);
      return;
    }
    if (
      a !== null &&
      b !== null &&
      typeof a === "object" &&
      typeof b === "object" &&
      !Array.isArray(a) &&
      !Array.isArray(b)
    ) {
      for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
        walk(a[name] ?? null, b[name] ?? null, where ? `${where}.${name}` : name, name);
      }
      return;
    }
    if (a !== b) differences.push(`${where}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`);
  };
  walk(fast, exact, "", "");
  return differences;
}

/** Whether an answer counts anything (a positive number outside `meta`): a filter that keeps nothing proves little. */
export function countsSomething(answer: Json): boolean {
  if (typeof answer === "number") return answer > 0;
  if (Array.isArray(answer)) return answer.some(countsSomething);
  if (answer !== null && typeof answer === "object") {
    return Object.entries(answer).some(([key, value]) => key !== "meta" && countsSomething(value));
  }
  return false;
}
