/** The text of a thrown value for a log line or an error message: an Error's message, else the value as text. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
