// The server's logger: leveled events with bound fields, written as one human line (`text`) or as pino's
// JSON line (`json`), synchronously so that a line logged just before exit is not lost.
import { pino, type Logger as PinoLogger } from 'pino';
import type { LogFormat, LogLevel } from './log-levels.js';

/** Values are written as they are; an Error is written with its stack. */
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose every line also carries `fields`, after those this logger binds. */
  child(fields: LogFields): Logger;
  /** Whether lines of `level` are written: work done only to log them can be left out. */
  enabled(level: LogLevel): boolean;
}

/** Where lines go: each call of `write` gets one whole line, newline included. */
export interface LogDestination {
  write(line: string): void;
}

export interface LoggerOptions {
  /** `silent` writes nothing (tests). */
  level: LogLevel | 'silent';
  format: LogFormat;
  /** Default: stdout, written synchronously. */
  destination?: LogDestination;
  /** Epoch milliseconds of each line (tests fix it). */
  now?: () => number;
}

export function createLogger(o: LoggerOptions): Logger {
  const out = o.destination ?? pino.destination({ dest: 1, sync: true });
  const now = o.now ?? Date.now;
  const text = o.format === 'text';
  const base = pino(
    {
      level: o.level,
      timestamp: () => `,"time":${now()}`,
      // Errors are serialized in `serializable`, under any key; pino's own `err` serializer would redo it.
      serializers: { err: (v: unknown) => v },
      // pid and hostname help whoever merges the JSON of many processes; a human line leaves them out.
      ...(text ? { base: null } : {}),
    },
    text ? { write: (json: string) => out.write(textLine(json)) } : out,
  );
  return wrap(base);
}

function wrap(p: PinoLogger): Logger {
  const at =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      // Checked first: a disabled level (debug lines on every request) must cost nothing.
      if (!p.isLevelEnabled(level)) return;
      if (fields === undefined) p[level](message);
      else p[level](serializable(fields), message);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => wrap(p.child(serializable(fields))),
    enabled: (level) => p.isLevelEnabled(level),
  };
}

/** pino serializes an Error only under `err`; any field may hold one here. */
function serializable(fields: LogFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? pino.stdSerializers.err(v) : v;
  return out;
}

const RESERVED = new Set(['level', 'time', 'msg']);

/** `ISO-TIME LEVEL message key=value ...` from one of pino's JSON lines; inner newlines are escaped. */
function textLine(json: string): string {
  const record: unknown = JSON.parse(json);
  if (typeof record !== 'object' || record === null) return json;
  const fields = Object.entries(record);
  const get = (key: string): unknown => fields.find(([k]) => k === key)?.[1];
  const time = Number(get('time'));
  const level = pino.levels.labels[Number(get('level'))] ?? 'log';
  const parts = [new Date(time).toISOString(), level.toUpperCase(), String(get('msg') ?? '').replace(/\r?\n/g, '\\n')];
  for (const [k, v] of fields) if (!RESERVED.has(k)) parts.push(`${k}=${textValue(v)}`);
  return `${parts.join(' ')}\n`;
}

/** Strings are quoted when a reader could not tell where they end; a serialized Error shows its stack. */
function textValue(v: unknown): string {
  const s =
    typeof v === 'string'
      ? v
      : typeof v === 'object' && v !== null && 'stack' in v && typeof v.stack === 'string'
        ? v.stack
        : undefined;
  if (s === undefined) return JSON.stringify(v);
  return s === '' || /[\s"=\\]/.test(s) ? JSON.stringify(s) : s;
}
