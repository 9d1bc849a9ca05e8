const encoder = new TextEncoder();

/**
 * Postgres's `collate "C"` order of two texts: their UTF-8 bytes compared. JavaScript's `<`
 * compares UTF-16 code units, which puts a character past U+FFFF (an emoji) before U+E000–U+FFFF,
 * where the bytes put it after.
 */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const difference = (left[index] as number) - (right[index] as number);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/** `byteOrder` with NULL after every text, as `collate "C" asc nulls last` orders them. */
export function byteOrderNullsLast(a: string | null, b: string | null): number {
  if (a === null || b === null) return (a === null ? 1 : 0) - (b === null ? 1 : 0);
  return byteOrder(a, b);
}
