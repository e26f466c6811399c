// Loggers for tests: a silent one for servers whose lines no test reads, and one that keeps its lines as
// parsed JSON records for tests that check what was logged.
import { z } from 'zod';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import type { LogLevel } from '../../src/lib/log-levels.js';

export function quietLogger(): Logger {
  return createLogger({ level: 'silent', format: 'text' });
}

const logRecordSchema = z.looseObject({ level: z.number(), time: z.number(), msg: z.string() });
export type LogRecord = z.infer<typeof logRecordSchema>;

/** pino's level numbers. */
export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;

export function recordingLogger(level: LogLevel = 'debug'): { logger: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const logger = createLogger({
    level,
    format: 'json',
    destination: { write: (line) => void records.push(logRecordSchema.parse(JSON.parse(line))) },
  });
  return { logger, records };
}
