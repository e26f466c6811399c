// Time formats used on the wire: HTTP-date for API objects and messages, ISO 8601 without fractions for signing.

import { rememberLast, rememberRecent } from './remember.js';

/** Texts of recent seconds: a job's nodes changed over a few seconds, and shown in name order they alternate
 * between them, so keeping only the last second missed for most nodes (each miss a Date formatted: a few µs). */
const secondText = rememberRecent(512, (second: number) => new Date(second * 1000).toUTCString());

/**
 * `Sat, 21 Nov 2026 10:35:19 GMT` (RFC 7231 IMF-fixdate). Every message sent and every node of a job shown
 * carries one, so the texts of recent seconds are kept.
 */
export function httpDate(ms: number): string {
  return secondText(Math.floor(ms / 1000));
}

/** `2026-11-21T10:35:19Z`: the only X-Ops-Timestamp form servers accept. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const MONTHS = 'JanFebMarAprMayJunJulAugSepOctNovDec';
const WEEKDAYS = 'SunMonTueWedThuFriSat';
const DAY_MS = 86_400_000;

function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Which 3-letter entry of `table` sits at s[at..at+3], compared by char code so nothing is allocated; -1 if none. */
function threeLetterIndex(table: string, s: string, at: number): number {
  const a = s.charCodeAt(at);
  const b = s.charCodeAt(at + 1);
  const c = s.charCodeAt(at + 2);
  for (let i = 0; i < table.length; i += 3) {
    if (table.charCodeAt(i) === a && table.charCodeAt(i + 1) === b && table.charCodeAt(i + 2) === c) return i / 3;
  }
  return -1;
}

function daysIn(month: number, year: number): number {
  if (month === 1) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 3 || month === 5 || month === 8 || month === 10 ? 30 : 31;
}

/**
 * Epoch ms of an IMF-fixdate (`Sat, 21 Nov 2026 10:35:19 GMT`, the form `httpDate` writes), or undefined.
 * Fixed offsets instead of Date.parse: it runs on every heartbeat, and Date.parse accepts many other forms
 * and rolls `31 Feb` over; here the weekday must match the date. Years before 1970 are refused (Date.UTC maps
 * two-digit years to 19xx). Every message is checked and then timed by its timestamp: the last one read is kept.
 */
export const parseHttpDate: (s: string) => number | undefined = rememberLast(parseFixdate);

function parseFixdate(s: string): number | undefined {
  if (s.length !== 29 || s[3] !== ',' || s[4] !== ' ' || s[7] !== ' ' || s[11] !== ' ' || s[16] !== ' ')
    return undefined;
  if (s[19] !== ':' || s[22] !== ':' || s[25] !== ' ' || s[26] !== 'G' || s[27] !== 'M' || s[28] !== 'T')
    return undefined;
  const month = threeLetterIndex(MONTHS, s, 8);
  const day = digits(s, 5, 2);
  const year = digits(s, 12, 4);
  const hour = digits(s, 17, 2);
  const minute = digits(s, 20, 2);
  const second = digits(s, 23, 2);
  if (month < 0 || year < 1970 || hour < 0 || hour > 23 || minute < 0 || minute > 59) return undefined;
  if (second < 0 || second > 59) return undefined;
  if (day < 1 || day > daysIn(month, year)) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, second);
  // 1970-01-01 was a Thursday (index 4 in WEEKDAYS).
  const weekday = (((Math.floor(ms / DAY_MS) + 4) % 7) + 7) % 7;
  return threeLetterIndex(WEEKDAYS, s, 0) === weekday ? ms : undefined;
}
