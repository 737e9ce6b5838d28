import { randomBytes } from "node:crypto";

/** joinAnd joins words as "a, b and c". */
export function joinAnd(words: readonly string[]): string {
  if (words.length <= 1) return words[0] ?? "";
  return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
}

/** newId returns a random 64-bit id in hex, as mcpgo's request ids. */
export function newId(): string {
  return randomBytes(8).toString("hex");
}
