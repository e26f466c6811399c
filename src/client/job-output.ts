// Captured job output: collected up to a cap, then cut so the completion message fits max_body_size, and
// marked `truncated` whenever anything was left out (the original dropped it silently, reference 7.5).

/** Keeps the first `limit` bytes of a stream and notes whether more came. */
export class OutputCollector {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  overflowed = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.kept;
    if (chunk.length > room) this.overflowed = true;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }

  /** The kept bytes as UTF-8; a character cut at the cap becomes U+FFFD. */
  text(): string {
    return Buffer.concat(this.chunks, this.kept).toString('utf8');
  }
}

/** Bytes a string takes inside a JSON body, quotes left out (escapes and UTF-8 counted). */
export function jsonBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s), 'utf8') - 2;
}

/** `s` cut at `n` UTF-16 units, one less when that would split a surrogate pair. */
function prefix(s: string, n: number): string {
  if (n >= s.length) return s;
  const last = s.charCodeAt(n - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? n - 1 : n);
}

/** The longest prefix of `s` of at most `maxUnits` UTF-16 units whose JSON size is within `budget` bytes. */
export function cutToJsonBytes(s: string, budget: number, maxUnits = Infinity): string {
  const capped = prefix(s, Math.min(s.length, maxUnits));
  if (jsonBytes(capped) <= budget) return capped;
  // Binary search on the length: JSON size grows with the prefix, and one unit adds at most 6 bytes.
  let lo = 0;
  let hi = capped.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (jsonBytes(prefix(capped, mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return prefix(capped, lo);
}

export interface FittedOutput {
  stdout: string;
  stderr: string;
  truncated: boolean;
}

/**
 * Fits both streams into `budget` JSON bytes, each at most `maxUnits` long. When both do not fit, each gets
 * half, and a stream needing less than half leaves the rest to the other. `cut` says something was already
 * lost while collecting.
 */
export function fitOutput(stdout: string, stderr: string, budget: number, maxUnits: number, cut = false): FittedOutput {
  const room = Math.max(0, budget);
  const out = cutToJsonBytes(stdout, room, maxUnits);
  const err = cutToJsonBytes(stderr, room, maxUnits);
  const outSize = jsonBytes(out);
  const errSize = jsonBytes(err);
  let fitted: { stdout: string; stderr: string };
  if (outSize + errSize <= room) {
    fitted = { stdout: out, stderr: err };
  } else {
    const half = Math.floor(room / 2);
    if (outSize <= half) fitted = { stdout: out, stderr: cutToJsonBytes(err, room - outSize) };
    else if (errSize <= half) fitted = { stdout: cutToJsonBytes(out, room - errSize), stderr: err };
    else fitted = { stdout: cutToJsonBytes(out, half), stderr: cutToJsonBytes(err, room - half) };
  }
  const truncated = cut || fitted.stdout.length < stdout.length || fitted.stderr.length < stderr.length;
  return { ...fitted, truncated };
}
