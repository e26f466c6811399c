// A parser that keeps its last answer: texts read several times in a row (a burst of messages sharing their
// second, a request's timestamp checked at each step) are parsed once.

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
