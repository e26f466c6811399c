// Search query parser: the tree users' queries turn into, and the positions named by syntax errors.
import t from 'tap';
import { parseQuery, SearchSyntaxError, type ParsedQuery } from '../../src/search/query.js';

const term = (field: string | null, value: string): ParsedQuery => ({ kind: 'term', field, value });
const bool = (must: ParsedQuery[], should: ParsedQuery[], mustNot: ParsedQuery[]): ParsedQuery => ({
  kind: 'bool',
  must,
  should,
  mustNot,
});

t.test('a field:value clause is an exact term, keeping the case the user typed', async (t) => {
  t.same(parseQuery('name:Web01'), term('name', 'Web01'));
  t.same(parseQuery('  role:web  '), term('role', 'web'), 'surrounding whitespace is ignored');
  t.same(parseQuery('name: web'), term('name', 'web'), 'whitespace after the colon is allowed');
});

t.test('AND binds tighter than OR', async (t) => {
  const expected = bool([], [term('a', '1'), bool([term('b', '2'), term('c', '3')], [], [])], []);
  t.same(parseQuery('a:1 OR b:2 AND c:3'), expected);
  t.same(parseQuery('a:1 || b:2 && c:3'), expected, '|| and && are the same operators');
  t.same(
    parseQuery('b:2 AND c:3 OR a:1'),
    bool([], [bool([term('b', '2'), term('c', '3')], [], []), term('a', '1')], []),
  );
});

t.test('adjacent clauses are joined by OR', async (t) => {
  t.same(parseQuery('a:1 b:2'), bool([], [term('a', '1'), term('b', '2')], []));
});

t.test('NOT binds to the next clause only', async (t) => {
  t.same(parseQuery('NOT a:1 AND b:2'), bool([term('b', '2')], [], [term('a', '1')]));
  t.same(parseQuery('!a:1 AND b:2'), bool([term('b', '2')], [], [term('a', '1')]));
  t.same(parseQuery('NOT (a:1 OR b:2)'), bool([], [], [bool([], [term('a', '1'), term('b', '2')], [])]));
  t.same(parseQuery('NOT a:1'), bool([], [], [term('a', '1')]), 'a lone NOT is "everything but"');
});

t.test('+ requires and - prohibits a clause, NOT in a list prohibits like -', async (t) => {
  t.same(parseQuery('a:1 -b:2 +c:3'), bool([term('c', '3')], [term('a', '1')], [term('b', '2')]));
  t.same(parseQuery('a:1 NOT b:2'), bool([], [term('a', '1')], [term('b', '2')]));
  t.same(parseQuery('a:1 OR NOT b:2'), bool([], [term('a', '1')], [term('b', '2')]));
  t.same(parseQuery('-a:1'), bool([], [], [term('a', '1')]));
  t.same(parseQuery('+a:1'), term('a', '1'));
  t.same(parseQuery('NOT -a:1'), bool([], [], [bool([], [], [term('a', '1')])]), 'double negation is kept as written');
});

t.test('operators are upper case words; lower-case and/or/not are terms', async (t) => {
  t.same(parseQuery('a:1 and b:2'), bool([], [term('a', '1'), term(null, 'and'), term('b', '2')], []));
  t.same(parseQuery('ANDROID'), term(null, 'ANDROID'), 'a word starting with AND is a term');
  t.same(parseQuery('name:AND'), term('name', 'AND'), 'after a colon AND is a value');
});

t.test('parentheses group, and field:(...) applies the field inside', async (t) => {
  t.same(
    parseQuery('(a:1 OR b:2) AND c:3'),
    bool([bool([], [term('a', '1'), term('b', '2')], []), term('c', '3')], [], []),
  );
  t.same(parseQuery('role:(web OR db)'), bool([], [term('role', 'web'), term('role', 'db')], []));
  t.same(parseQuery('((a:1))'), term('a', '1'));
});

t.test('wildcards: * and ? anywhere in a value, *:* and field:*', async (t) => {
  t.same(parseQuery('name:web*'), { kind: 'wildcard', field: 'name', pattern: 'web*' });
  t.same(parseQuery('name:*01'), { kind: 'wildcard', field: 'name', pattern: '*01' });
  t.same(parseQuery('name:w?b-*-0?'), { kind: 'wildcard', field: 'name', pattern: 'w?b-*-0?' });
  t.same(parseQuery('*:*'), { kind: 'all' });
  t.same(parseQuery('*'), { kind: 'all' });
  t.same(parseQuery('tags:*'), { kind: 'exists', field: 'tags' });
  t.same(parseQuery('*:web'), term(null, 'web'), 'a * field means any field');
  t.same(parseQuery('web*'), { kind: 'wildcard', field: null, pattern: 'web*' });
});

t.test('backslash escapes special characters', async (t) => {
  t.same(parseQuery('name:web\\-1'), term('name', 'web-1'));
  t.same(parseQuery('run_list:recipe\\[nginx\\]'), term('run_list', 'recipe[nginx]'));
  t.same(parseQuery('recipes:nginx\\:\\:default'), term('recipes', 'nginx::default'));
  t.same(parseQuery('path:\\/var\\/log'), term('path', '/var/log'));
  t.same(parseQuery('motd:hello\\ world'), term('motd', 'hello world'));
  t.same(parseQuery('a\\:b:c'), term('a:b', 'c'), 'an escaped colon stays in the field name');
  t.same(parseQuery('name:a\\*b'), term('name', 'a*b'), 'an escaped * is literal');
  t.same(parseQuery('name:a\\*b*'), { kind: 'wildcard', field: 'name', pattern: 'a\\*b*' });
  t.same(parseQuery('name:\\-x'), term('name', '-x'));
});

t.test('colons inside a value need no escape', async (t) => {
  t.same(parseQuery('recipe:nginx::default'), term('recipe', 'nginx::default'));
  t.same(parseQuery('ip6address:fe80::1'), term('ip6address', 'fe80::1'));
});

t.test('quoted phrases are one value, with spaces and literal wildcards', async (t) => {
  t.same(parseQuery('description:"two words"'), term('description', 'two words'));
  t.same(parseQuery('motd:"say \\"hi\\""'), term('motd', 'say "hi"'));
  t.same(parseQuery('name:"web*"'), term('name', 'web*'));
  t.same(parseQuery('"two words"'), term(null, 'two words'));
});

t.test('ranges: inclusive, exclusive, mixed, open ends, quoted ends', async (t) => {
  const range = (
    field: string,
    lower: string | null,
    upper: string | null,
    includeLower: boolean,
    includeUpper: boolean,
  ) => ({
    kind: 'range',
    field,
    lower,
    upper,
    includeLower,
    includeUpper,
  });
  t.same(parseQuery('n:[1 TO 5]'), range('n', '1', '5', true, true));
  t.same(parseQuery('n:{1 TO 5}'), range('n', '1', '5', false, false));
  t.same(parseQuery('n:[1 TO 5}'), range('n', '1', '5', true, false));
  t.same(parseQuery('n:[* TO 5]'), range('n', null, '5', true, true));
  t.same(parseQuery('n:{a TO *}'), range('n', 'a', null, false, false));
  t.same(parseQuery('t:["10:00" TO "12:00"]'), range('t', '10:00', '12:00', true, true));
  t.same(parseQuery('t:[10:00 TO 12:00]'), range('t', '10:00', '12:00', true, true));
});

t.test('syntax errors name the character position (0-based)', async (t) => {
  const cases: [string, number, string][] = [
    ['', 0, 'empty query at position 0'],
    ['   ', 0, 'empty query at position 0'],
    ['role:web AND chef_environment:prod)', 34, "unexpected ')' at position 34"],
    ['(role:web', 0, "unbalanced '(' at position 0"],
    ['a:1 AND (b:2 OR (c:3)', 8, "unbalanced '(' at position 8"],
    ['()', 1, "unexpected ')' at position 1"],
    ['name:"web', 5, `unbalanced '"' at position 5`],
    ['role:web AND', 12, 'unexpected end of query at position 12'],
    ['role:web OR', 11, 'unexpected end of query at position 11'],
    ['AND role:web', 0, "unexpected 'AND' at position 0"],
    ['a:1 AND OR b:2', 8, "unexpected 'OR' at position 8"],
    ['a:1 && || b:2', 7, "unexpected '||' at position 7"],
    ['NOT', 3, 'unexpected end of query at position 3'],
    ['a:1 -', 5, 'unexpected end of query at position 5'],
    ['name:', 5, 'unexpected end of query at position 5'],
    [':web', 0, "unexpected ':' at position 0"],
    ['n:[1 5]', 5, "expected 'TO' at position 5"],
    ['n:[1 TO 5', 2, "unbalanced '[' at position 2"],
    ['n:{1 TO', 2, "unbalanced '{' at position 2"],
    ['n:[1 TO 5)', 9, "unexpected ')' at position 9"],
    ['name:web\\', 8, "dangling '\\' at position 8"],
    ['a]', 1, "unexpected ']' at position 1"],
    ['na*e:web', 0, 'wildcard in field name at position 0'],
  ];
  for (const [q, position, message] of cases) {
    const err = t.throws(() => parseQuery(q), SearchSyntaxError, JSON.stringify(q));
    t.match(err, { name: 'SearchSyntaxError', position, message }, JSON.stringify(q));
  }
});

t.test('deeply nested queries are refused instead of overflowing the stack', async (t) => {
  const deep = `${'('.repeat(10_000)}a${')'.repeat(10_000)}`;
  t.throws(() => parseQuery(deep), { name: 'SearchSyntaxError', message: /nested too deeply/ });
  t.throws(() => parseQuery(`${'NOT '.repeat(10_000)}a`), { name: 'SearchSyntaxError', message: /nested too deeply/ });
  t.same(parseQuery(`${'('.repeat(50)}a${')'.repeat(50)}`), term(null, 'a'), 'reasonable nesting is fine');
});
