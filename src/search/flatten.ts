// Flattening of stored documents into search fields, the way Chef's expander indexed them.
//
// Every value is indexed under its full underscore-joined key path and under its leaf key, so
// `{languages: {ruby: {version: "3.1"}}}` gives `languages_ruby_version:3.1` and `version:3.1`.
// Each key is also a value of its parent path (`languages:ruby`, `languages_ruby:version`), which is
// how the expander made "has this sub-key" queries work. Array elements are values of the array's
// path; objects inside arrays continue the path without an index. Numbers, booleans and null
// become strings (`null` is the empty string). Values keep their case; the index folds it.
//
// Nodes are indexed as their deep-merged attributes (automatic > override > normal > default; arrays
// from different levels are united, as the server's indexing merge did) plus top-level `name`,
// `chef_type`, `chef_environment`, `run_list`, `recipe` and `role`, which win over attributes of the
// same name. Run-list expansion: `role[web]` gives role `web`; `recipe[nginx]` and
// `recipe[nginx::default]` both give recipe `nginx` and `nginx::default` (the default recipe
// answers to either name, as chef-client's expanded `recipes` list does); `recipe[nginx@1.2.0]`
// drops the version; a bare `nginx` entry is a recipe.

export type DocumentKind = 'node' | 'role' | 'environment' | 'data';

type JsonObject = { [key: string]: unknown };

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Collects each field's distinct values in first-seen order. */
class FieldCollector {
  readonly fields = new Map<string, Set<string>>();

  add(field: string, value: string): void {
    let values = this.fields.get(field);
    if (values === undefined) {
      values = new Set();
      this.fields.set(field, values);
    }
    values.add(value);
  }

  /** Indexes `value` under its leaf key and, below the top level, under the joined key path. */
  addAt(leaf: string | null, joined: string, value: string): void {
    if (leaf === null) return;
    this.add(leaf, value);
    if (joined !== leaf) this.add(joined, value);
  }

  /** `leaf` is the innermost key (null at the top) and `joined` the underscore-joined key path. */
  walk(leaf: string | null, joined: string, value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.walk(leaf, joined, item);
    } else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        this.addAt(leaf, joined, key);
        this.walk(key, leaf === null ? key : `${joined}_${key}`, child);
      }
    } else {
      const text = scalarText(value);
      if (text !== null) this.addAt(leaf, joined, text);
    }
  }

  result(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [field, values] of this.fields) out.set(field, [...values]);
    return out;
  }
}

function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return '';
  return null;
}

/** Deep merge where `over` wins; objects merge key by key and arrays are united. */
export function deepMerge(under: unknown, over: unknown): unknown {
  if (over === undefined) return under;
  if (isObject(under) && isObject(over)) {
    const merged: JsonObject = { ...under };
    for (const [key, value] of Object.entries(over)) merged[key] = deepMerge(under[key], value);
    return merged;
  }
  if (Array.isArray(under) && Array.isArray(over)) return [...under, ...over];
  return over;
}

/** Recipe and role names from a run list (reference: the node indexing of the original server). */
export function expandRunList(runList: readonly unknown[]): { recipe: string[]; role: string[] } {
  const recipe = new Set<string>();
  const role: string[] = [];
  for (const entry of runList) {
    if (typeof entry !== 'string') continue;
    const roleMatch = /^role\[(.+)\]$/.exec(entry);
    if (roleMatch?.[1] !== undefined) {
      role.push(roleMatch[1]);
      continue;
    }
    const recipeMatch = /^recipe\[(.+)\]$/.exec(entry);
    const name = (recipeMatch?.[1] ?? entry).replace(/@[^@]*$/, '');
    if (name === '') continue;
    recipe.add(name);
    if (name.endsWith('::default')) recipe.add(name.slice(0, -'::default'.length));
    else if (!name.includes('::')) recipe.add(`${name}::default`);
  }
  return { recipe: [...recipe], role };
}

function nodeForIndex(doc: JsonObject): JsonObject {
  let merged: unknown = {};
  for (const level of ['default', 'normal', 'override', 'automatic'] as const) {
    if (isObject(doc[level])) merged = deepMerge(merged, doc[level]);
  }
  const runList = Array.isArray(doc.run_list) ? doc.run_list : [];
  const { recipe, role } = expandRunList(runList);
  const top: JsonObject = { chef_type: 'node', run_list: runList, recipe, role };
  for (const key of ['name', 'chef_environment', 'policy_name', 'policy_group'] as const) {
    if (typeof doc[key] === 'string') top[key] = doc[key];
  }
  return { ...(isObject(merged) ? merged : {}), ...top };
}

/** Flattens one document into field -> distinct values. A non-object document has no fields. */
export function flattenDocument(kind: DocumentKind, doc: unknown): Map<string, string[]> {
  if (!isObject(doc)) return new Map();
  const collector = new FieldCollector();
  collector.walk(null, '', kind === 'node' ? nodeForIndex(doc) : doc);
  return collector.result();
}
