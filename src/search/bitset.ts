// Bitsets over document numbers: query results and the postings of values many documents share.
export type Bits = Uint32Array;

export function setBit(bits: Bits, n: number): void {
  bits[n >>> 5] = (bits[n >>> 5] ?? 0) | (1 << (n & 31));
}

export function clearBit(bits: Bits, n: number): void {
  bits[n >>> 5] = (bits[n >>> 5] ?? 0) & ~(1 << (n & 31));
}

/** Combines `from` into `acc` word by word; `from` may be shorter (missing words are zero). */
export function mergeInto(acc: Bits, from: Bits, op: (a: number, b: number) => number): void {
  for (let i = 0; i < acc.length; i++) acc[i] = op(acc[i] ?? 0, from[i] ?? 0);
}

export function grown(bits: Bits, words: number): Bits {
  const next = new Uint32Array(Math.max(words, bits.length * 2));
  next.set(bits);
  return next;
}
