// In-memory search index: an inverted index field -> value -> documents, kept current by put and
// remove, and the evaluation of ParsedQuery trees against it.
//
// Matching folds case: values are stored lower-cased and query values are lower-cased before
// lookup, as the original Solr index did; field names are matched exactly. A value matches only as
// a whole (a phrase is a whole value with spaces in it). Exact terms are one map lookup per field;
// wildcards and ranges scan the distinct values of their field (every field when none is named).
//
// Memory: documents get small integer numbers, so a value held by one document costs one map entry
// holding that number; only shared values get a list or a bitset. Query results are bitsets over
// document numbers, walked in id order for paging.
import { clearBit, grown, mergeInto, setBit, type Bits } from './bitset.js';
import type { ParsedQuery } from './query.js';
import { globTest, rangeTest } from './value-tests.js';

/**
 * The documents holding one value: a lone document number, a list while few documents share it, a
 * bitset once a list would be larger than one. Shared postings keep one copy of the value for the
 * documents' term lists. Lists rather than Sets: smaller, and free of the hash-table slowdown
 * described at vacate. VACANT marks a value no document holds any more.
 */
type Posting = number | { value: string; docs: number[] } | { value: string; bits: Uint32Array; count: number };

interface FieldEntry {
  name: string;
  values: Map<string, Posting>;
  /** Values held by some document, and values held by none (see vacate). */
  live: number;
  vacant: number;
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

function setPosting(bits: Bits, posting: Posting): void {
  if (typeof posting === 'number') {
    if (posting !== VACANT) setBit(bits, posting);
  } else if ('bits' in posting) {
    mergeInto(bits, posting.bits, (a, b) => a | b);
  } else {
    for (const doc of posting.docs) setBit(bits, doc);
  }
}

/** Walks a document's term list: a field entry followed by that field's values, repeated. */
function forEachTerm(terms: readonly (FieldEntry | string)[], fn: (entry: FieldEntry, value: string) => void): void {
  let entry: FieldEntry | undefined;
  for (const term of terms) {
    if (typeof term !== 'string') entry = term;
    else if (entry === undefined) throw new Error('search index term list starts with a value');
    else fn(entry, term);
  }
}

/** A list posting of at least MIN_BITS_DOCS becomes a bitset once its length times LIST_TO_BITS exceeds the capacity. */
const LIST_TO_BITS = 128;
const VACANT = -1;
const MIN_VACANT = 16;
const MIN_BITS_DOCS = 64;

export class SearchIndex {
  private readonly fields = new Map<string, FieldEntry>();
  private readonly docNos = new Map<string, number>();
  /** By document number: its id, and its terms (see forEachTerm). */
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
    const old = docNo === undefined ? [] : (this.terms[docNo] ?? []);
    if (docNo === undefined) {
      docNo = this.freeDocNos.pop() ?? this.ids.length;
      this.docNos.set(id, docNo);
      this.ids[docNo] = id;
      this.growLive(docNo);
      setBit(this.live, docNo);
      this.insertOrder(docNo);
    }
    const fresh = new Map<string, Set<string>>();
    for (const [name, values] of fields) {
      if (values.length > 0) fresh.set(name, new Set(values.map((v) => v.toLowerCase())));
    }
    // Unchanged terms stay put: deleting and re-adding the same key degrades V8's hash tables.
    const terms: (FieldEntry | string)[] = [];
    let current: FieldEntry | null = null;
    forEachTerm(old, (entry, value) => {
      if (fresh.get(entry.name)?.delete(value) !== true) return this.drop(entry, value, docNo);
      if (current !== entry) {
        current = entry;
        terms.push(entry);
      }
      terms.push(value);
    });
    for (const [name, values] of fresh) {
      if (values.size === 0) continue;
      let entry = this.fields.get(name);
      if (entry === undefined) {
        entry = { name, values: new Map(), live: 0, vacant: 0 };
        this.fields.set(name, entry);
      }
      terms.push(entry);
      for (const value of values) terms.push(this.addPosting(entry, value, docNo));
    }
    this.terms[docNo] = terms;
  }

  /** Forgets document `id`; false when it was not indexed. */
  remove(id: string): boolean {
    const docNo = this.docNos.get(id);
    if (docNo === undefined) return false;
    forEachTerm(this.terms[docNo] ?? [], (entry, value) => this.drop(entry, value, docNo));
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
    if (!Number.isInteger(start) || start < 0)
      throw new RangeError(`start must be a non-negative integer, got ${start}`);
    if (!Number.isInteger(rows) || rows < 0) throw new RangeError(`rows must be a non-negative integer, got ${rows}`);
    const bits = this.evaluate(query);
    const ids: string[] = [];
    let total = 0;
    for (const docNo of this.sortedOrder()) {
      if ((((bits[docNo >>> 5] ?? 0) >>> (docNo & 31)) & 1) === 0) continue;
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
    const acc = must.length === 0 && should.length > 0 ? this.empty() : this.live.slice();
    for (const q of must) mergeInto(acc, this.evaluate(q), (a, b) => a & b);
    if (must.length === 0) for (const q of should) mergeInto(acc, this.evaluate(q), (a, b) => a | b);
    for (const q of mustNot) mergeInto(acc, this.evaluate(q), (a, b) => a & ~b);
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

  /** Adds `docNo` under `value`; returns the copy of `value` the document should keep. */
  private addPosting(entry: FieldEntry, value: string, docNo: number): string {
    const posting = entry.values.get(value);
    if (posting === undefined || posting === VACANT) {
      entry.values.set(value, docNo);
      entry.live += 1;
      if (posting === VACANT) entry.vacant -= 1;
      return value;
    }
    if (typeof posting === 'number') {
      entry.values.set(value, { value, docs: [posting, docNo] });
      return value;
    }
    if ('bits' in posting) {
      if (posting.bits.length <= docNo >>> 5) posting.bits = grown(posting.bits, this.live.length);
      setBit(posting.bits, docNo);
      posting.count += 1;
    } else if (posting.docs.length < MIN_BITS_DOCS || posting.docs.length * LIST_TO_BITS < this.ids.length) {
      posting.docs.push(docNo);
    } else {
      const bits = new Uint32Array(this.live.length);
      for (const doc of posting.docs) setBit(bits, doc);
      setBit(bits, docNo);
      entry.values.set(value, { value: posting.value, bits, count: posting.docs.length + 1 });
    }
    return posting.value;
  }

  private drop(entry: FieldEntry, value: string, docNo: number): void {
    const posting = entry.values.get(value);
    if (posting === undefined || posting === VACANT) return;
    if (typeof posting === 'number') {
      this.vacate(entry, value);
    } else if ('bits' in posting) {
      clearBit(posting.bits, docNo);
      posting.count -= 1;
      if (posting.count === 0) this.vacate(entry, value);
    } else {
      const at = posting.docs.indexOf(docNo);
      if (at < 0) return;
      const last = posting.docs.pop() ?? docNo;
      if (at < posting.docs.length) posting.docs[at] = last;
      if (posting.docs.length === 1) entry.values.set(value, posting.docs[0] ?? docNo);
    }
  }

  /**
   * Marks a value as held by no document. The key stays in the map (V8's hash tables slow down
   * when one key is deleted and added again, as a value flipping between saves would do), and
   * the map is rebuilt once vacant keys outnumber live ones.
   */
  private vacate(entry: FieldEntry, value: string): void {
    entry.values.set(value, VACANT);
    entry.live -= 1;
    entry.vacant += 1;
    if (entry.live === 0) {
      if (this.fields.get(entry.name) === entry) this.fields.delete(entry.name);
    } else if (entry.vacant > MIN_VACANT && entry.vacant > entry.live) {
      entry.values = new Map([...entry.values].filter(([, p]) => p !== VACANT));
      entry.vacant = 0;
    }
  }

  private empty(): Bits {
    return new Uint32Array(this.live.length);
  }

  private growLive(docNo: number): void {
    const words = (docNo >>> 5) + 1;
    if (words > this.live.length) this.live = grown(this.live, words);
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
