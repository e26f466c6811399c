// The error of a broken settings file: it names the file, the line and the setting (exit code 2).
/** Printed as `FILE:LINE: text`; line 0 means the whole file (`FILE: text`). The binaries exit with code 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly line: number,
    readonly setting: string | undefined,
    text: string,
    options?: { cause?: unknown },
  ) {
    super(line > 0 ? `${file}:${line}: ${text}` : `${file}: ${text}`, options);
  }
}
