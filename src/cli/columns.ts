// Aligned text for the cli's human output: columns under a header, and `Key:` lines padded like knife's summary.

/** Each column padded to its widest cell, two spaces apart; the last column is not padded. */
export function formatColumns(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      header
        .map((_, i) => (i === header.length - 1 ? (r[i] ?? '') : (r[i] ?? '').padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** `Key:` padded to the longest key + 1, a space, the value (reference: infra-server-original 6, summary format). */
export function formatFields(fields: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(0, ...fields.map(([k]) => k.length)) + 1;
  return fields.map(([k, v]) => (v === '' ? `${k}:\n` : `${`${k}:`.padEnd(width)} ${v}\n`)).join('');
}
