// Search query language: a Lucene/Solr subset parsed by recursive descent into a ParsedQuery tree.
//
// Decisions (where Lucene is ambiguous or quirky):
// - AND binds tighter than OR, and adjacent clauses are joined by OR (Lucene's default operator):
//   `a OR b AND c` is `a OR (b AND c)`, not Lucene's `a +b +c`.
// - In a list of clauses, `+x` is required and `-x`, `!x`, `NOT x` are prohibited, as in Lucene:
//   `a -b`, `a NOT b` and `a OR NOT b` all mean "a and not b". A list of prohibited clauses alone
//   matches everything else (Solr's rewrite of pure negative queries), so `NOT a` works on its own.
// - A clause without a field (`web`, `"two words"`, `[a TO b]`) looks at every field. `*:*` and a
//   bare `*` match every document; `field:*` matches documents that have the field.
// - Inside a value (after `field:`) unescaped colons are literal, so `recipe:nginx::default` needs
//   no escapes; `recipe:nginx\:\:default` means the same.
// - Values keep the user's case here; the index folds case when matching.
// - `position` in SearchSyntaxError is the 0-based offset into the query string.

export type ParsedQuery =
  | { kind: 'all' }
  | { kind: 'exists'; field: string }
  | { kind: 'term'; field: string | null; value: string }
  /** `pattern` is a glob: unescaped `*` and `?` are wildcards; `\*`, `\?`, `\\` are literal. */
  | { kind: 'wildcard'; field: string | null; pattern: string }
  | {
      kind: 'range';
      field: string | null;
      lower: string | null;
      upper: string | null;
      includeLower: boolean;
      includeUpper: boolean;
    }
  | { kind: 'bool'; must: ParsedQuery[]; should: ParsedQuery[]; mustNot: ParsedQuery[] };

export class SearchSyntaxError extends Error {
  override readonly name = 'SearchSyntaxError';
  constructor(
    readonly position: number,
    readonly reason: string,
  ) {
    super(`${reason} at position ${position}`);
  }
}

/** Bounds recursion so a hostile query cannot overflow the stack. */
const MAX_DEPTH = 64;

type Occur = 'must' | 'should' | 'mustNot';
interface Clause {
  occur: Occur;
  query: ParsedQuery;
}

type Operator = 'AND' | 'OR' | 'NOT' | '&&' | '||' | '!' | '+' | '-';

const WORD_END = /[\s()"]/;
const TERM_STOP = /[\s()"[\]{}]/;

function isWordOperator(src: string, at: number, word: string): boolean {
  if (!src.startsWith(word, at)) return false;
  const after = src[at + word.length];
  return after === undefined || WORD_END.test(after);
}

class Parser {
  private pos = 0;

  constructor(private readonly src: string) {}

  parse(): ParsedQuery {
    this.skipSpace();
    if (this.pos === this.src.length) throw new SearchSyntaxError(0, 'empty query');
    const query = this.parseOr(null, 0);
    if (this.pos < this.src.length) throw this.unexpected();
    return query;
  }

  /** Clauses joined by OR, `||` or nothing, up to the end or a `)`. */
  private parseOr(field: string | null, depth: number): ParsedQuery {
    const clauses: Clause[] = [];
    for (;;) {
      this.skipSpace();
      const op = this.peekOperator();
      if (clauses.length > 0 && (op === 'OR' || op === '||')) {
        this.pos += op.length;
        this.skipSpace();
      } else if (this.pos === this.src.length || this.src[this.pos] === ')') {
        break;
      }
      clauses.push(this.parseAnd(field, depth));
    }
    return combine(clauses);
  }

  /** Unary clauses joined by AND or `&&`; a single clause keeps its own occurrence. */
  private parseAnd(field: string | null, depth: number): Clause {
    const first = this.parseUnary(field, depth);
    const parts: Clause[] = [first];
    for (;;) {
      this.skipSpace();
      const op = this.peekOperator();
      if (op !== 'AND' && op !== '&&') break;
      this.pos += op.length;
      parts.push(this.parseUnary(field, depth));
    }
    if (parts.length === 1) return first;
    const required = parts.map((p) => (p.occur === 'should' ? { occur: 'must' as const, query: p.query } : p));
    return { occur: 'should', query: combine(required) };
  }

  private parseUnary(field: string | null, depth: number): Clause {
    if (depth > MAX_DEPTH) throw new SearchSyntaxError(this.pos, 'query nested too deeply');
    this.skipSpace();
    const op = this.peekOperator();
    if (op === 'AND' || op === 'OR' || op === '&&' || op === '||') throw this.unexpected();
    if (op === null) return { occur: 'should', query: this.parsePrimary(field, depth) };
    this.pos += op.length;
    const inner = this.parseUnary(field, depth + 1);
    if (op === '+') return { occur: 'must', query: standalone(inner) };
    return { occur: 'mustNot', query: standalone(inner) };
  }

  /** A group, phrase or range opening here; null when a plain term does. */
  private parseBracketed(field: string | null, depth: number): ParsedQuery | null {
    this.skipSpace();
    const c = this.src[this.pos];
    if (c === undefined || c === ')') throw this.unexpected();
    if (c === '(') return this.parseGroup(field, depth);
    if (c === '"') return this.parsePhrase(field);
    if (c === '[' || c === '{') return this.parseRange(field);
    return null;
  }

  private parsePrimary(field: string | null, depth: number): ParsedQuery {
    const bracketed = this.parseBracketed(field, depth);
    if (bracketed !== null) return bracketed;
    const start = this.pos;
    const term = this.readTerm(false);
    if (term.raw === '') throw this.unexpected();
    if (this.src[this.pos] !== ':') return valueQuery(field, term);
    if (term.wild && term.raw !== '*') throw new SearchSyntaxError(start, 'wildcard in field name');
    this.pos += 1;
    return this.parseValue(term.raw === '*' ? null : term.text, depth, term.raw === '*');
  }

  /** The value after `field:`; `anyField` is set for `*:`, where `*:*` means every document. */
  private parseValue(field: string | null, depth: number, anyField: boolean): ParsedQuery {
    const bracketed = this.parseBracketed(field, depth);
    if (bracketed !== null) return bracketed;
    const term = this.readTerm(true);
    if (term.raw === '') throw this.unexpected();
    if (anyField && term.raw === '*') return { kind: 'all' };
    return valueQuery(field, term);
  }

  private parseGroup(field: string | null, depth: number): ParsedQuery {
    const open = this.pos;
    this.pos += 1;
    this.skipSpace();
    if (this.src[this.pos] === ')') throw this.unexpected();
    if (this.pos === this.src.length) throw new SearchSyntaxError(open, "unbalanced '('");
    const inner = this.parseOr(field, depth + 1);
    if (this.src[this.pos] !== ')') throw new SearchSyntaxError(open, "unbalanced '('");
    this.pos += 1;
    return inner;
  }

  private parsePhrase(field: string | null): ParsedQuery {
    return { kind: 'term', field, value: this.readQuoted() };
  }

  private readQuoted(): string {
    const open = this.pos;
    this.pos += 1;
    let text = '';
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined) throw new SearchSyntaxError(open, `unbalanced '"'`);
      this.pos += 1;
      if (c === '"') return text;
      if (c === '\\') {
        const escaped = this.src[this.pos];
        if (escaped === undefined) throw new SearchSyntaxError(open, `unbalanced '"'`);
        text += escaped;
        this.pos += 1;
      } else {
        text += c;
      }
    }
  }

  /** `[a TO b]` inclusive, `{a TO b}` exclusive (ends may differ), `*` for an open end. */
  private parseRange(field: string | null): ParsedQuery {
    const open = this.pos;
    const includeLower = this.src[open] === '[';
    this.pos += 1;
    const lower = this.readRangeEnd(open);
    this.skipSpace();
    if (!isWordOperator(this.src, this.pos, 'TO')) {
      if (this.pos === this.src.length) throw new SearchSyntaxError(open, `unbalanced '${this.src[open] ?? ''}'`);
      throw new SearchSyntaxError(this.pos, "expected 'TO'");
    }
    this.pos += 2;
    const upper = this.readRangeEnd(open);
    this.skipSpace();
    const close = this.src[this.pos];
    if (close === undefined) throw new SearchSyntaxError(open, `unbalanced '${this.src[open] ?? ''}'`);
    if (close !== ']' && close !== '}') throw this.unexpected();
    this.pos += 1;
    return { kind: 'range', field, lower, upper, includeLower, includeUpper: close === ']' };
  }

  private readRangeEnd(open: number): string | null {
    this.skipSpace();
    const c = this.src[this.pos];
    if (c === undefined) throw new SearchSyntaxError(open, `unbalanced '${this.src[open] ?? ''}'`);
    if (c === '"') return this.readQuoted();
    const term = this.readTerm(true);
    if (term.raw === '') throw this.unexpected();
    return term.raw === '*' ? null : term.text;
  }

  /**
   * Reads a term up to whitespace or a special character. `text` is unescaped, `glob` keeps wildcards
   * and escapes literal `*`, `?` and `\`, `raw` is the source slice.
   */
  private readTerm(colonIsLiteral: boolean): { text: string; glob: string; raw: string; wild: boolean } {
    const start = this.pos;
    let text = '';
    let glob = '';
    let wild = false;
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined || TERM_STOP.test(c) || (c === ':' && !colonIsLiteral)) break;
      this.pos += 1;
      if (c === '\\') {
        const escaped = this.src[this.pos];
        if (escaped === undefined) throw new SearchSyntaxError(this.pos - 1, "dangling '\\'");
        this.pos += 1;
        text += escaped;
        glob += escaped === '*' || escaped === '?' || escaped === '\\' ? `\\${escaped}` : escaped;
      } else {
        if (c === '*' || c === '?') wild = true;
        text += c;
        glob += c;
      }
    }
    return { text, glob, raw: this.src.slice(start, this.pos), wild };
  }

  private peekOperator(): Operator | null {
    const c = this.src[this.pos];
    if (c === '+' || c === '-' || c === '!') return c;
    if (this.src.startsWith('&&', this.pos)) return '&&';
    if (this.src.startsWith('||', this.pos)) return '||';
    for (const word of ['AND', 'OR', 'NOT'] as const) if (isWordOperator(this.src, this.pos, word)) return word;
    return null;
  }

  private skipSpace(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos] ?? '')) this.pos += 1;
  }

  private unexpected(): SearchSyntaxError {
    if (this.pos >= this.src.length) return new SearchSyntaxError(this.pos, 'unexpected end of query');
    const op = this.peekOperator();
    const shown = op !== null && op.length > 1 ? op : (this.src[this.pos] ?? '');
    return new SearchSyntaxError(this.pos, `unexpected '${shown}'`);
  }
}

function valueQuery(field: string | null, term: { text: string; glob: string; wild: boolean }): ParsedQuery {
  if (!term.wild) return { kind: 'term', field, value: term.text };
  if (/^\*+$/.test(term.glob)) return field === null ? { kind: 'all' } : { kind: 'exists', field };
  return { kind: 'wildcard', field, pattern: term.glob };
}

/** A clause as a query of its own: a prohibited clause becomes "everything but it". */
function standalone(clause: Clause): ParsedQuery {
  return clause.occur === 'mustNot' ? { kind: 'bool', must: [], should: [], mustNot: [clause.query] } : clause.query;
}

function combine(clauses: Clause[]): ParsedQuery {
  const only = clauses[0];
  if (clauses.length === 1 && only !== undefined && only.occur !== 'mustNot') return only.query;
  const pick = (occur: Occur): ParsedQuery[] => clauses.filter((c) => c.occur === occur).map((c) => c.query);
  return { kind: 'bool', must: pick('must'), should: pick('should'), mustNot: pick('mustNot') };
}

/** Parses a query string; throws SearchSyntaxError naming the offending position. */
export function parseQuery(q: string): ParsedQuery {
  return new Parser(q).parse();
}
