// The parser of `setting value` files: Ruby literals (strings, numbers, symbols, arrays, hashes), never
// evaluated. It knows nothing of which settings exist; settings-file.ts validates what it returns.
import { ConfigError } from './config-error.js';

export type SettingValue =
  string | number | boolean | null | SettingValue[] | { [k: string]: SettingValue } | { constant: 'STDOUT' | 'STDERR' };

export interface Setting {
  name: string;
  value: SettingValue;
  line: number;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  0: '\0',
  r: '\r',
  s: ' ',
  e: '\x1b',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '"': '"',
  '\\': '\\',
  "'": "'",
  '#': '#',
};
const NAME = /[a-z_][A-Za-z0-9_]*/y;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const SYMBOL = /[A-Za-z_][A-Za-z0-9_]*[?!=]?/y;
const LABEL = /([A-Za-z_][A-Za-z0-9_]*[?!]?):(?!:)/y;
const NUMBER = /[+-]?(\d+(?:_\d+)*)(\.\d+(?:_\d+)*)?([eE][+-]?\d+(?:_\d+)*)?/y;

class Parser {
  private pos = 0;
  private line = 1;
  private setting: string | undefined;

  constructor(
    private readonly text: string,
    private readonly file: string,
  ) {
    if (text.startsWith('\uFEFF')) this.pos = 1;
  }

  parseFile(): Setting[] {
    const out: Setting[] = [];
    for (;;) {
      this.setting = undefined;
      this.skip(true);
      if (this.pos >= this.text.length) return out;
      const line = this.line;
      const name = this.match(NAME);
      if (name === undefined) this.fail(`expected a setting name, found ${this.found()}`);
      this.setting = name;
      this.skip(false);
      out.push({ name, value: this.settingValue(name), line });
      this.skip(false);
      if (!this.atLineEnd()) this.fail(`unexpected ${this.found()} after the value of ${name}`);
    }
  }

  private settingValue(name: string): SettingValue {
    const c = this.peek();
    if (c === '(') {
      this.pos++;
      this.skip(true);
      const value = this.value();
      this.skip(true);
      if (this.peek() !== ')') this.fail(`expected ")" after the value of ${name}, found ${this.found()}`);
      this.pos++;
      return value;
    }
    if (this.atLineEnd()) this.fail(`${name} has no value`);
    if (c === '=' && this.peek(1) !== '>') this.fail(`"${name} =" assignment is not supported; write: ${name} VALUE`);
    if (c === '.' || this.text.startsWith('::', this.pos)) {
      this.fail(`method calls are not supported: ${JSON.stringify(name + this.token())}`);
    }
    return this.value();
  }

  private value(): SettingValue {
    const c = this.peek();
    if (c === '"' || c === "'") return this.quoted();
    if (c === '[') return this.array();
    if (c === '{') return this.hash();
    if (c === ':') return this.symbol();
    if (/[0-9]/.test(c) || (/[+-]/.test(c) && /[0-9]/.test(this.peek(1)))) return this.number();
    const start = this.pos;
    const word = this.match(WORD);
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'nil') return null;
    if (word === 'STDOUT' || word === 'STDERR') return { constant: word };
    this.pos = start;
    this.fail(`expected a value (string, number, true, false, nil, symbol, array or hash), found ${this.found()}`);
  }

  /** Strings never span lines here, so a missing quote is caught on its own line. */
  private quoted(): string {
    const [line, quote] = [this.line, this.peek()];
    let out = '';
    for (this.pos++; ;) {
      const c = this.peek();
      this.pos++;
      if (c === '' || c === '\n') this.fail('unterminated string', line);
      if (c === quote) return out;
      if (quote === "'") {
        // Single quotes know two escapes only: \\ and \'.
        out += c === '\\' && /['\\]/.test(this.peek()) ? this.text.charAt(this.pos++) : c;
      } else if (c === '\\') {
        out += this.escape(line);
      } else if (c === '#' && /^(\{|@[A-Za-z_@]|\$[A-Za-z_])/.test(this.text.slice(this.pos, this.pos + 2))) {
        // Ruby interpolates #{expr}, #@ivar and #$gvar inside double quotes; this reader evaluates nothing.
        this.fail('string interpolation (#{...}) is not supported; write the value literally');
      } else {
        out += c;
      }
    }
  }

  private escape(line: number): string {
    const c = this.peek();
    this.pos++;
    if (c === '' || c === '\n') this.fail('unterminated string', line);
    const simple = SIMPLE_ESCAPES[c];
    if (simple !== undefined) return simple;
    if (c !== 'u') this.fail(`unknown escape "\\${c}" in string`);
    const braced = this.match(/\{ *[0-9a-fA-F]{1,6}(?: +[0-9a-fA-F]{1,6})* *\}/y);
    const codes = braced !== undefined ? braced.slice(1, -1).trim().split(/ +/) : [this.match(/[0-9a-fA-F]{4}/y)];
    return codes
      .map((hex) => {
        const code = hex === undefined ? NaN : parseInt(hex, 16);
        return code <= 0x10ffff ? String.fromCodePoint(code) : this.fail('bad \\u escape in string');
      })
      .join('');
  }

  private symbol(): string {
    this.pos++;
    const c = this.peek();
    if (c === '"' || c === "'") return this.quoted();
    const name = this.match(SYMBOL);
    if (name === undefined) this.fail(`expected a symbol name after ":", found ${this.found()}`);
    return name;
  }

  private number(): number {
    const start = this.pos;
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(this.text);
    const [text = '', intPart = '', fraction, exponent] = m ?? [];
    this.pos += text.length;
    const bad = (why: string): never => {
      this.pos = start;
      return this.fail(`bad number ${this.found()}${why}`);
    };
    if (/^[A-Za-z0-9_]|^\.[0-9]|^\.$/.test(this.text.slice(this.pos, this.pos + 2))) bad('');
    if (intPart.length > 1 && intPart.startsWith('0')) bad(' (a leading 0 makes it octal in Ruby)');
    const value = Number(text.replace(/_/g, ''));
    if (fraction === undefined && exponent === undefined && !Number.isSafeInteger(value)) bad(' (too large)');
    return value;
  }

  private array(): SettingValue[] {
    const items: SettingValue[] = [];
    this.list(']', 'array', () => items.push(this.value()));
    return items;
  }

  private hash(): { [k: string]: SettingValue } {
    const out: { [k: string]: SettingValue } = {};
    this.list('}', 'hash', () => {
      const key = this.hashKey();
      // An own `__proto__` key would reach object prototypes downstream.
      if (key === '__proto__') this.fail('the hash key "__proto__" is not allowed');
      if (Object.hasOwn(out, key)) this.fail(`duplicate key ${JSON.stringify(key)} in the hash`);
      this.skip(true);
      out[key] = this.value();
    });
    return out;
  }

  /** Comma-separated items up to `close`; newlines, comments and a trailing comma are allowed. */
  private list(close: string, what: string, item: () => void): void {
    const line = this.line;
    for (this.pos++; ;) {
      this.skip(true);
      if (this.peek() === '') this.fail(`unterminated ${what}`, line);
      if (this.peek() === close) break;
      item();
      this.skip(true);
      if (this.peek() === ',') this.pos++;
      else if (this.peek() !== close && this.peek() !== '') {
        this.fail(`expected "," or "${close}" in the ${what}, found ${this.found()}`);
      }
    }
    this.pos++;
  }

  /** `key: v`, `"key": v`, or `KEY => v` where KEY is a string or a symbol. */
  private hashKey(): string {
    const label = this.match(LABEL);
    if (label !== undefined) return label.slice(0, -1);
    const quoted = this.peek() === '"' || this.peek() === "'";
    const key = this.value();
    if (typeof key !== 'string') this.fail('hash keys must be strings or symbols');
    if (quoted && this.peek() === ':' && this.peek(1) !== ':') {
      this.pos++;
      return key;
    }
    this.skip(true);
    if (!this.text.startsWith('=>', this.pos)) this.fail(`expected "=>" after the hash key, found ${this.found()}`);
    this.pos += 2;
    return key;
  }

  /** Spaces and comments; newlines too when inside brackets. */
  private skip(newlines: boolean): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\r') this.pos++;
      else if (c === '#') while (this.pos < this.text.length && this.peek() !== '\n') this.pos++;
      else if (c === '\n' && newlines) {
        this.pos++;
        this.line++;
      } else return;
    }
  }

  private atLineEnd(): boolean {
    return this.peek() === '' || this.peek() === '\n';
  }

  private peek(offset = 0): string {
    return this.text[this.pos + offset] ?? '';
  }

  private match(re: RegExp): string | undefined {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) return undefined;
    this.pos = re.lastIndex;
    return m[0];
  }

  private token(): string {
    return /[^\s]{1,32}/y.exec(this.text.slice(this.pos))?.[0] ?? '';
  }

  private found(): string {
    if (this.atLineEnd()) return this.peek() === '' ? 'end of file' : 'end of line';
    return JSON.stringify(this.token());
  }

  private fail(text: string, line = this.line): never {
    throw new ConfigError(this.file, line, this.setting, text);
  }
}

export function parseSettings(text: string, file: string): Setting[] {
  return new Parser(text, file).parseFile();
}
