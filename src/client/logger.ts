// push-jobs-client's log: one line per event, `ISO-TIME LEVEL message`, at or above the chosen level (spec 4.5 -l, -L).
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LogLevel } from '../config/settings-file.js';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/** Where lines go: a file (appended, created with its folder), or one of the standard streams. */
export type LogTarget = { file: string } | { stream: 'stdout' | 'stderr' };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A line as written: newlines inside a message are escaped so that one event stays one line. */
export function formatLine(level: LogLevel, message: string, nowMs: number): string {
  return `${new Date(nowMs).toISOString()} ${level.toUpperCase()} ${message.replace(/\r?\n/g, '\\n')}\n`;
}

export function createLogger(level: LogLevel, target: LogTarget, now: () => number = Date.now): Logger {
  // Synchronous writes: a line logged just before exit must not be lost, and the rate is low (events, not bytes).
  let write: (line: string) => void;
  if ('file' in target) {
    mkdirSync(dirname(target.file), { recursive: true });
    write = (line) => appendFileSync(target.file, line);
  } else {
    const stream = target.stream === 'stdout' ? process.stdout : process.stderr;
    write = (line) => void stream.write(line);
  }
  const at = (l: LogLevel) => (message: string) => {
    if (RANK[l] >= RANK[level]) write(formatLine(l, message, now()));
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The text of a thrown value, for a log line; a bare "request failed" gets its cause (ECONNREFUSED...). */
export function errorMessage(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const cause: unknown = e.cause;
  if (!(cause instanceof Error) || e.message.includes(cause.message)) return e.message;
  return `${e.message} (${'code' in cause ? String(cause.code) : cause.message})`;
}
