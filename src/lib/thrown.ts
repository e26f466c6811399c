// What can be told of a thrown value, which may be anything.

/** The text of a thrown value for a log line or an error message: an Error's message, else the value as text. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A system error's code (`EINTR`, `ENOENT`, …), if the value carries one. */
export function codeOf(e: unknown): unknown {
  return e instanceof Error && 'code' in e ? e.code : undefined;
}

/** A system error of the given code (`ENOENT`, …). */
export function hasCode(e: unknown, code: string): boolean {
  return codeOf(e) === code;
}
