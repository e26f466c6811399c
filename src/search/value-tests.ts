// Tests of one stored value against a wildcard pattern or a range, compiled once per query.
import type { ParsedQuery } from './query.js';

const REGEX_SYNTAX = /[\^$\\.*+?()[\]{}|/]/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/;

/** Compiles a query glob (see ParsedQuery) into an anchored, case-folded test. */
export function globTest(pattern: string): (value: string) => boolean {
  const glob = pattern.toLowerCase();
  let source = '';
  let prefix = '';
  let literalPrefix = true;
  for (let i = 0; i < glob.length; i++) {
    let c = glob[i] ?? '';
    if (c === '*' || c === '?') {
      source += c === '*' ? '.*' : '.';
      literalPrefix = false;
      continue;
    }
    if (c === '\\') c = glob[++i] ?? '';
    source += REGEX_SYNTAX.test(c) ? `\\${c}` : c;
    if (literalPrefix) prefix += c;
  }
  const regex = new RegExp(`^${source}$`, 'su');
  return (value) => value.startsWith(prefix) && regex.test(value);
}

/** Numeric comparison when every closed end and the value are numbers, else string comparison. */
export function rangeTest(q: Extract<ParsedQuery, { kind: 'range' }>): (value: string) => boolean {
  const lower = q.lower?.toLowerCase() ?? null;
  const upper = q.upper?.toLowerCase() ?? null;
  const numericEnds = (lower === null || NUMBER.test(lower)) && (upper === null || NUMBER.test(upper));
  const within = <T extends number | string>(v: T, lo: T | null, hi: T | null): boolean =>
    (lo === null || (q.includeLower ? v >= lo : v > lo)) && (hi === null || (q.includeUpper ? v <= hi : v < hi));
  return (value) => {
    if (numericEnds && NUMBER.test(value)) {
      return within(Number(value), lower === null ? null : Number(lower), upper === null ? null : Number(upper));
    }
    return within(value, lower, upper);
  };
}
