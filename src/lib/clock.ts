// Time formats used on the wire: HTTP-date for API objects, ISO 8601 without fractions for signing.

/** `Sat, 21 Nov 2026 10:35:19 GMT` (RFC 7231 IMF-fixdate). */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

/** `2026-11-21T10:35:19Z`: the only X-Ops-Timestamp form servers accept. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
