// In-memory search index: an inverted index field -> value -> documents, kept current by put and
// remove, and the evaluation of ParsedQuery trees against it.
//
// Matching folds case: values are stored lower-cased and query values are lower-cased before
// lookup, as the original Solr index did; field names are matched exactly. A value matches only as
// a whole (a phrase is a whole value with spaces in it). Exact terms are one map lookup per field;
// wildcards and ranges scan the distinct values of their field (every field when none is named).
//
// Memory: documents get small integer numbers, so a value held by one document costs one map
// entry holding that number, and only values shared by several documents get a Set. Query
// results are bitsets over document numbers, walked in id order for paging.
import type { ParsedQuery } from './query.js';

/** One document's number, or several documents sharing a value (with one kept copy of the value). */
type Posting = number | { value: string; docs: Set<number> };

interface FieldEntry {
  name: string;
  values: Map<string, Posting>;
}

export interface SearchOptions {
  start: number;
  rows: number;
  /** Read permission check; documents it refuses are neither returned nor counted. */
  filter?: (id: string) => boolean;
}

export interface SearchResult {
  total: number;
  ids: string[];
}

type Bits = Uint32Array;

function hasBit(bits: Bits, n: number): boolean {
  return (((bits[n >>> 5] ?? 0) >>> (n & 31)) & 1) === 1;
}

function setBit(bits: Bits, n: number): void {
  bits[n >>> 5] = (bits[n >>> 5] ?? 0) | (1 << (n & 31));
}

function clearBit(bits: Bits, n: number): void {
  bits[n >>> 5] = (bits[n >>> 5] ?? 0) & ~(1 << (n & 31));
}

function setPosting(bits: Bits, posting: Posting): void {
  if (typeof posting === 'number') setBit(bits, posting);
  else for (const doc of posting.docs) setBit(bits, doc);
}

const REGEX_SYNTAX = /[\^$\\.*+?()[\]{}|/]/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/;

/** Compiles a query glob (see ParsedQuery) into an anchored, case-folded test. */
function globTest(pattern: string): (value: string) => boolean {
  const glob = pattern.toLowerCase();
  let source = '';
  let prefix = '';
  let literalPrefix = true;
  for (let i = 0; i < glob.length; i++) {
    let c = glob[i] ?? '';
    if (c === '*' || c === '?') {
      source += c === '*' ? '.*' : '.';
      literalPrefix = false;
      continue;
    }
    if (c === '\\') c = glob[++i] ?? '';
    source += REGEX_SYNTAX.test(c) ? `\\${c}` : c;
    if (literalPrefix) prefix += c;
  }
  const regex = new RegExp(`^${source}$`, 'su');
  return (value) => value.startsWith(prefix) && regex.test(value);
}

/** Numeric comparison when every closed end and the value are numbers, else string comparison. */
function rangeTest(q: Extract<ParsedQuery, { kind: 'range' }>): (value: string) => boolean {
  const lower = q.lower?.toLowerCase() ?? null;
  const upper = q.upper?.toLowerCase() ?? null;
  const numericEnds = (lower === null || NUMBER.test(lower)) && (upper === null || NUMBER.test(upper));
  const within = <T extends number | string>(v: T, lo: T | null, hi: T | null): boolean =>
    (lo === null || (q.includeLower ? v >= lo : v > lo)) && (hi === null || (q.includeUpper ? v <= hi : v < hi));
  return (value) => {
    if (numericEnds && NUMBER.test(value)) {
      return within(Number(value), lower === null ? null : Number(lower), upper === null ? null : Number(upper));
    }
    return within(value, lower, upper);
  };
}

export class SearchIndex {
  private readonly fields = new Map<string, FieldEntry>();
  private readonly docNos = new Map<string, number>();
  /** By document number: its id, and its terms as alternating field entry and stored value. */
  private readonly ids: (string | undefined)[] = [];
  private readonly terms: ((FieldEntry | string)[] | undefined)[] = [];
  private readonly freeDocNos: number[] = [];
  private live: Bits = new Uint32Array(1);
  /** Live document numbers sorted by id; built on the first search, then kept in step. */
  private order: number[] | null = null;

  get size(): number {
    return this.docNos.size;
  }

  /** Indexes `fields` as the whole content of document `id`, replacing what it had before. */
  put(id: string, fields: ReadonlyMap<string, readonly string[]>): void {
    let docNo = this.docNos.get(id);
    if (docNo === undefined) {
      docNo = this.freeDocNos.pop() ?? this.ids.length;
      this.docNos.set(id, docNo);
      this.ids[docNo] = id;
      this.growLive(docNo);
      setBit(this.live, docNo);
      this.insertOrder(docNo);
    } else {
      this.unindex(docNo);
    }
    const terms: (FieldEntry | string)[] = [];
    for (const [name, values] of fields) {
      if (values.length === 0) continue;
      let entry = this.fields.get(name);
      if (entry === undefined) {
        entry = { name, values: new Map() };
        this.fields.set(name, entry);
      }
      for (const raw of values) {
        const stored = addPosting(entry, raw.toLowerCase(), docNo);
        if (stored !== null) terms.push(entry, stored);
      }
    }
    this.terms[docNo] = terms;
  }

  /** Forgets document `id`; false when it was not indexed. */
  remove(id: string): boolean {
    const docNo = this.docNos.get(id);
    if (docNo === undefined) return false;
    this.unindex(docNo);
    if (this.order !== null) this.order.splice(this.orderPosition(id), 1);
    this.docNos.delete(id);
    this.ids[docNo] = undefined;
    this.terms[docNo] = undefined;
    clearBit(this.live, docNo);
    this.freeDocNos.push(docNo);
    return true;
  }

  /** Matching ids in id order, `rows` of them from `start`; `total` counts every permitted match. */
  search(query: ParsedQuery, opts: SearchOptions): SearchResult {
    const { start, rows, filter } = opts;
    if (!Number.isInteger(start) || start < 0) throw new RangeError(`start must be a non-negative integer, got ${start}`);
    if (!Number.isInteger(rows) || rows < 0) throw new RangeError(`rows must be a non-negative integer, got ${rows}`);
    const bits = this.evaluate(query);
    const ids: string[] = [];
    let total = 0;
    for (const docNo of this.sortedOrder()) {
      if (!hasBit(bits, docNo)) continue;
      const id = this.ids[docNo];
      if (id === undefined || (filter !== undefined && !filter(id))) continue;
      if (total >= start && ids.length < rows) ids.push(id);
      total += 1;
    }
    return { total, ids };
  }

  private evaluate(q: ParsedQuery): Bits {
    switch (q.kind) {
      case 'all':
        return this.live.slice();
      case 'exists': {
        const bits = this.empty();
        for (const posting of this.fields.get(q.field)?.values.values() ?? []) setPosting(bits, posting);
        return bits;
      }
      case 'term': {
        const bits = this.empty();
        const value = q.value.toLowerCase();
        for (const entry of this.fieldsFor(q.field)) {
          const posting = entry.values.get(value);
          if (posting !== undefined) setPosting(bits, posting);
        }
        return bits;
      }
      case 'wildcard':
        return this.scan(q.field, globTest(q.pattern));
      case 'range':
        return this.scan(q.field, rangeTest(q));
      case 'bool':
        return this.evaluateBool(q.must, q.should, q.mustNot);
    }
  }

  /** Lucene occurrence rules: all `must`; else at least one `should`; else everything; minus `mustNot`. */
  private evaluateBool(must: ParsedQuery[], should: ParsedQuery[], mustNot: ParsedQuery[]): Bits {
    let acc: Bits;
    if (must.length > 0) {
      acc = this.live.slice();
      for (const q of must) {
        const b = this.evaluate(q);
        for (let i = 0; i < acc.length; i++) acc[i] = (acc[i] ?? 0) & (b[i] ?? 0);
      }
    } else if (should.length > 0) {
      acc = this.empty();
      for (const q of should) {
        const b = this.evaluate(q);
        for (let i = 0; i < acc.length; i++) acc[i] = (acc[i] ?? 0) | (b[i] ?? 0);
      }
    } else {
      acc = this.live.slice();
    }
    for (const q of mustNot) {
      const b = this.evaluate(q);
      for (let i = 0; i < acc.length; i++) acc[i] = (acc[i] ?? 0) & ~(b[i] ?? 0);
    }
    return acc;
  }

  private scan(field: string | null, test: (value: string) => boolean): Bits {
    const bits = this.empty();
    for (const entry of this.fieldsFor(field)) {
      for (const [value, posting] of entry.values) if (test(value)) setPosting(bits, posting);
    }
    return bits;
  }

  private fieldsFor(field: string | null): Iterable<FieldEntry> {
    if (field === null) return this.fields.values();
    const entry = this.fields.get(field);
    return entry === undefined ? [] : [entry];
  }

  private unindex(docNo: number): void {
    const terms = this.terms[docNo] ?? [];
    for (let i = 0; i < terms.length; i += 2) {
      const entry = terms[i];
      const value = terms[i + 1];
      if (typeof entry !== 'object' || typeof value !== 'string') throw new Error('corrupt search index term list');
      removePosting(entry, value, docNo);
      if (entry.values.size === 0 && this.fields.get(entry.name) === entry) this.fields.delete(entry.name);
    }
  }

  private empty(): Bits {
    return new Uint32Array(this.live.length);
  }

  private growLive(docNo: number): void {
    const words = (docNo >>> 5) + 1;
    if (words <= this.live.length) return;
    const grown = new Uint32Array(Math.max(words, this.live.length * 2));
    grown.set(this.live);
    this.live = grown;
  }

  private sortedOrder(): number[] {
    if (this.order === null) {
      const ids = this.ids;
      this.order = [...this.docNos.values()].sort((a, b) => ((ids[a] ?? '') < (ids[b] ?? '') ? -1 : 1));
    }
    return this.order;
  }

  private insertOrder(docNo: number): void {
    const id = this.ids[docNo];
    if (this.order !== null && id !== undefined) this.order.splice(this.orderPosition(id), 0, docNo);
  }

  /** Binary search in `order`: the index of `id`, or where it would be inserted. */
  private orderPosition(id: string): number {
    const order = this.order ?? [];
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ids[order[mid] ?? -1] ?? '') < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Adds `docNo` under `value`; returns the value copy to remember, or null if already there. */
function addPosting(entry: FieldEntry, value: string, docNo: number): string | null {
  const posting = entry.values.get(value);
  if (posting === undefined) {
    entry.values.set(value, docNo);
    return value;
  }
  if (typeof posting === 'number') {
    if (posting === docNo) return null;
    entry.values.set(value, { value, docs: new Set([posting, docNo]) });
    return value;
  }
  if (posting.docs.has(docNo)) return null;
  posting.docs.add(docNo);
  return posting.value;
}

function removePosting(entry: FieldEntry, value: string, docNo: number): void {
  const posting = entry.values.get(value);
  if (posting === undefined) return;
  if (typeof posting === 'number') {
    if (posting === docNo) entry.values.delete(value);
    return;
  }
  posting.docs.delete(docNo);
  if (posting.docs.size === 1) {
    const [last] = posting.docs;
    if (last !== undefined) entry.values.set(value, last);
  }
}
