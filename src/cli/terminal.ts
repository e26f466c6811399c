// Terminal output of infra-server-ctl and the cli, after knife's ui (reference 6): the summary text format,
// JSON, the stdout/stderr split, the Y/N question, and the error a command stops with.
import { ConfigError } from '../config/config-error.js';
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export const OUTPUT_FORMATS = ['summary', 'text', 'json'] as const;
/** `text` is knife's other name for `summary`. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseFormat(value: string): OutputFormat | undefined {
  return OUTPUT_FORMATS.find((f) => f === value);
}

/** Exit codes shared by the command-line tools. */
export const EXIT = { ok: 0, failed: 1, usage: 2, declined: 3 } as const;

/**
 * Stops a command: `message` (unless empty) goes to stderr after `ERROR: `, then `details` as they are.
 * Exit code 1, 2 for usage errors (the tool adds the command's usage), 3 for a question answered no.
 */
export class CommandError extends Error {
  override name = 'CommandError';
  constructor(
    message: string,
    readonly details: readonly string[] = [],
    readonly exitCode: number = EXIT.failed,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static usage(message: string): CommandError {
    return new CommandError(message, [], EXIT.usage);
  }
}

const isTerminal = (s: Readable): boolean => 'isTTY' in s && s.isTTY === true;

const isScalar = (v: unknown): boolean => v === null || typeof v !== 'object';

function scalarText(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : String(v);
}

/**
 * knife's summary format: a list gives one line per item; a hash gives its sorted keys as `key:` padded to
 * the longest key + 1, a space and the value; a nested list or hash goes on the following lines, indented
 * two spaces. A one-item list of a scalar prints as that scalar.
 */
export function formatSummary(value: unknown): string {
  return summaryLines(value)
    .map((l) => `${l}\n`)
    .join('');
}

function summaryLines(value: unknown): string[] {
  if (Array.isArray(value)) {
    const out: string[] = [];
    value.forEach((item, i) => {
      out.push(...summaryLines(item));
      // Lists of lists or hashes keep a blank line between items.
      if (!isScalar(item) && i < value.length - 1) out.push('');
    });
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const width = Math.max(0, ...entries.map(([k]) => k.length)) + 1;
    const out: string[] = [];
    for (const [key, raw] of entries) {
      const v: unknown = Array.isArray(raw) && raw.length === 1 && isScalar(raw[0]) ? raw[0] : raw;
      if (isScalar(v)) {
        const text = scalarText(v);
        out.push(text === '' ? `${key}:` : `${`${key}:`.padEnd(width)} ${text}`);
      } else {
        out.push(`${key}:`);
        for (const line of summaryLines(v)) out.push(line === '' ? '' : `  ${line}`);
      }
    }
    return out;
  }
  return [scalarText(value)];
}

export function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function formatOutput(value: unknown, format: OutputFormat): string {
  return format === 'json' ? formatJson(value) : formatSummary(value);
}

export interface UiStreams {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
}

/** knife's ui: data and answers on stdout, messages and errors on stderr. */
export class Ui {
  private lines: AsyncIterator<string> | undefined;
  private reader: Interface | undefined;

  constructor(
    private readonly io: UiStreams,
    readonly format: OutputFormat = 'summary',
  ) {}

  /** A line for the user on stdout. */
  msg(text: string): void {
    this.io.stdout.write(`${text}\n`);
  }

  /** Progress and notes on stderr, so stdout stays data. */
  info(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  warn(text: string): void {
    this.io.stderr.write(`WARNING: ${text}\n`);
  }

  error(text: string): void {
    this.io.stderr.write(`ERROR: ${text}\n`);
  }

  /** Writes text exactly as given (a key PEM, say) on stdout. */
  raw(text: string): void {
    this.io.stdout.write(text);
  }

  /** Data in the chosen format on stdout. */
  output(value: unknown): void {
    this.io.stdout.write(formatOutput(value, this.format));
  }

  /** Prints a CommandError the way the tools report failures; returns its exit code. */
  report(e: CommandError): number {
    if (e.message !== '') this.error(e.message);
    for (const line of e.details) this.io.stderr.write(`${line}\n`);
    return e.exitCode;
  }

  /**
   * Asks `QUESTION? (Y/N) ` on stdout and reads a line from stdin until it is Y or N. N prints
   * `You said no, so I'm done here.` and throws a CommandError with exit code 3, as does a closed stdin.
   */
  async confirm(question: string): Promise<void> {
    for (;;) {
      this.io.stdout.write(`${question}? (Y/N) `);
      const answer = await this.readLine();
      // A terminal echoes the answer and its newline; piped answers are not echoed, so end the line here.
      if (answer === undefined || !isTerminal(this.io.stdin)) this.io.stdout.write('\n');
      if (answer === undefined) {
        throw new CommandError(
          'no answer on standard input; nothing was changed (use -y to skip the question)',
          [],
          EXIT.declined,
        );
      }
      const a = answer.trim();
      if (/^y(es)?$/i.test(a)) return;
      if (/^no?$/i.test(a)) {
        this.msg("You said no, so I'm done here.");
        throw new CommandError('', [], EXIT.declined);
      }
      this.msg(`I have no idea what to do with '${a}'`);
      this.msg('Just say Y or N, please.');
    }
  }

  /** Releases stdin so the process can exit. */
  close(): void {
    this.reader?.close();
    this.reader = undefined;
    this.lines = undefined;
  }

  private async readLine(): Promise<string | undefined> {
    if (this.lines === undefined) {
      // One reader for the whole run: a second one would lose lines the first had buffered.
      this.reader = createInterface({ input: this.io.stdin, terminal: false });
      this.lines = this.reader[Symbol.asyncIterator]();
    }
    const next = await this.lines.next();
    return next.done === true ? undefined : next.value;
  }
}

/** Runs one command: a broken config file is a usage error (2); a CommandError prints and exits as it says. */
export async function runCommand(ui: Ui, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ConfigError) {
      ui.info(e.message);
      return EXIT.usage;
    }
    if (e instanceof CommandError) return ui.report(e);
    throw e;
  } finally {
    ui.close();
  }
}

/** Sets the exit code from an executable's main; anything unexpected prints its stack and fails. */
export function exitWhenDone(main: Promise<number>): void {
  main.then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      process.stderr.write(`ERROR: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = EXIT.failed;
    },
  );
}
