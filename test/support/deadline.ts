// Polling with a deadline for tests and benchmarks that drive child processes. It imports nothing, so a
// benchmark can use it without loading the in-process test server that test-node.ts brings along.

/** Calls `probe` every `pollMs` until it returns something other than undefined; fails after `timeoutMs` naming `what`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  pollMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
