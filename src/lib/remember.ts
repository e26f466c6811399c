// Parsers and formatters that keep recent answers: texts read several times in a row (a burst of messages sharing
// their second, a request's timestamp checked at each step) are parsed once, and the few values a process formats
// or hashes again and again are computed once.

/** `parse` with its last successful answer kept; a failure (null or undefined) is not kept. */
export function rememberLast<R>(parse: (text: string) => R): (text: string) => R {
  let last: { text: string; value: R } | undefined;
  return (text) => {
    if (text === last?.text) return last.value;
    const value = parse(text);
    if (value !== null && value !== undefined) last = { text, value };
    return value;
  };
}

/** `compute` with the answers of up to `limit` recent keys kept; once full, they are forgotten and kept afresh. */
export function rememberRecent<K, V>(limit: number, compute: (key: K) => V): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    let value = kept.get(key);
    if (value === undefined) {
      value = compute(key);
      if (kept.size >= limit) kept.clear();
      kept.set(key, value);
    }
    return value;
  };
}
