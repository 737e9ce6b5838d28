import { randomFillSync } from "node:crypto";

/** joinAnd joins words as "a, b and c". */
export function joinAnd(words: readonly string[]): string {
  if (words.length <= 1) return words[0] ?? "";
  return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
}

// Random bytes for ids, drawn from the system 512 ids at a time: one
// system call per call stamped was a tenth of the client's own cost.
const pool = Buffer.allocUnsafe(8 * 512);
let next = pool.length;

/** newId returns a random 64-bit id in hex, as mcpgo's request ids. */
export function newId(): string {
  if (next >= pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const id = pool.toString("hex", next, next + 8);
  next += 8;
  return id;
}
