// The `setting value` reader: every literal form, comments, and each error's `FILE:LINE: message` text.
import t from 'tap';
import { z } from 'zod';
import { readSettings } from '../../src/config/settings-file.js';
import { configErrorOf } from '../support/config-error.js';
import { parseSettings, type SettingValue } from '../../src/config/ruby-literals.js';

const valueFor = (text: string): SettingValue | undefined => parseSettings(`x ${text}`, 'f.rb')[0]?.value;
const parseError = (text: string): string => configErrorOf(() => parseSettings(text, 'f.rb')).message;

t.test('double-quoted strings decode their escapes', async (t) => {
  t.equal(valueFor('"a\\nb\\tc"'), 'a\nb\tc');
  t.equal(valueFor('"say \\"hi\\""'), 'say "hi"');
  t.equal(valueFor('"C:\\\\infra\\\\client.pem"'), 'C:\\infra\\client.pem');
  t.equal(valueFor('"caf\\u00e9"'), 'café');
  t.equal(valueFor('"\\u{1F600} \\u{41 42}"'), '😀 AB');
  t.equal(valueFor('"\\#{not interpolated}"'), '#{not interpolated}');
  t.equal(valueFor('""'), '');
});

t.test("single-quoted strings keep backslashes except \\\\ and \\'", async (t) => {
  t.equal(valueFor("'it\\'s'"), "it's");
  t.equal(valueFor("'a\\\\b'"), 'a\\b');
  t.equal(valueFor("'a\\nb #{x}'"), 'a\\nb #{x}');
});

t.test('numbers, booleans, nil, symbols and constants', async (t) => {
  t.equal(valueFor('10002'), 10002);
  t.equal(valueFor('65_536'), 65536);
  t.equal(valueFor('-3'), -3);
  t.equal(valueFor('0'), 0);
  t.equal(valueFor('2.5'), 2.5);
  t.equal(valueFor('1.5e3'), 1500);
  t.equal(valueFor('-1E-2'), -0.01);
  t.equal(valueFor('true'), true);
  t.equal(valueFor('false'), false);
  t.equal(valueFor('nil'), null);
  t.equal(valueFor(':info'), 'info');
  t.equal(valueFor(':verify_none'), 'verify_none');
  t.equal(valueFor(':"with space"'), 'with space');
  t.strictSame(valueFor('STDOUT'), { constant: 'STDOUT' });
  t.strictSame(valueFor('STDERR'), { constant: 'STDERR' });
});

t.test('arrays and hashes, nested, in every key form', async (t) => {
  t.strictSame(valueFor('[]'), []);
  t.strictSame(valueFor('[1, "two", :three, nil, [true]]'), [1, 'two', 'three', null, [true]]);
  t.strictSame(valueFor('[1, 2,]'), [1, 2]);
  t.strictSame(valueFor('{}'), {});
  t.strictSame(valueFor('{ "a" => "b", :c => 1, d: [2], "e": { f: nil } }'), {
    a: 'b',
    c: 1,
    d: [2],
    e: { f: null },
  });
  t.strictSame(valueFor("{'chef-client'=>'chef-client'}"), { 'chef-client': 'chef-client' });
  t.strictSame(valueFor('{a:1}'), { a: 1 });
});

t.test('parentheses around the value are optional', async (t) => {
  const settings = parseSettings('a("x")\nb ("y")\nc(\n  1\n)\nd({ "k" => "v" })\n', 'f.rb');
  t.strictSame(settings, [
    { name: 'a', value: 'x', line: 1 },
    { name: 'b', value: 'y', line: 2 },
    { name: 'c', value: 1, line: 3 },
    { name: 'd', value: { k: 'v' }, line: 6 },
  ]);
});

t.test('multi-line values, comments and blank lines keep line numbers right', async (t) => {
  const text = [
    '# push jobs client',
    '',
    'whitelist({',
    '  "chef-client" => "chef-client",   # the default job',
    '  # a comment line inside the hash',
    '  "hash #tag" => \'echo "#1"\',',
    '})',
    'ports [',
    '  10000,',
    '  10002 # command',
    ']',
    'node_name "web1" # trailing comment',
    '   ',
    'log_location STDOUT',
  ].join('\n');
  t.strictSame(parseSettings(text, 'f.rb'), [
    { name: 'whitelist', value: { 'chef-client': 'chef-client', 'hash #tag': 'echo "#1"' }, line: 3 },
    { name: 'ports', value: [10000, 10002], line: 8 },
    { name: 'node_name', value: 'web1', line: 12 },
    { name: 'log_location', value: { constant: 'STDOUT' }, line: 14 },
  ]);
});

t.test('CRLF line endings and a byte-order mark are accepted', async (t) => {
  t.strictSame(parseSettings('\uFEFFa 1\r\nb "x"\r\n', 'f.rb'), [
    { name: 'a', value: 1, line: 1 },
    { name: 'b', value: 'x', line: 2 },
  ]);
});

t.test('an empty file or one with only comments has no settings', async (t) => {
  t.strictSame(parseSettings('', 'f.rb'), []);
  t.strictSame(parseSettings('# nothing\n\n  # here\n', 'f.rb'), []);
});

t.test('string errors name the line', async (t) => {
  t.equal(parseError('a 1\nb "open\nc 2'), 'f.rb:2: unterminated string');
  t.equal(parseError("a 'open"), 'f.rb:1: unterminated string');
  t.equal(
    parseError('a 1\nclient_key "#{current_dir}/client.pem"'),
    'f.rb:2: string interpolation (#{...}) is not supported; write the value literally',
  );
  t.equal(parseError('a "#@dir"'), 'f.rb:1: string interpolation (#{...}) is not supported; write the value literally');
  t.equal(parseError('a "C:\\chef"'), 'f.rb:1: unknown escape "\\c" in string');
  t.equal(parseError('a "\\u12"'), 'f.rb:1: bad \\u escape in string');
  t.equal(parseError('a "\\u{110000}"'), 'f.rb:1: bad \\u escape in string');
});

t.test('anything but a literal value is refused', async (t) => {
  t.equal(
    parseError('current_dir = "/x"'),
    'f.rb:1: "current_dir =" assignment is not supported; write: current_dir VALUE',
  );
  t.equal(parseError('Chef::Config.foo 1'), 'f.rb:1: expected a setting name, found "Chef::Config.foo"');
  t.equal(parseError('log.level 1'), 'f.rb:1: method calls are not supported: "log.level"');
  t.equal(
    parseError('client_key File.join("/etc", "x")'),
    'f.rb:1: expected a value (string, number, true, false, nil, symbol, array or hash), found "File.join(\\"/etc\\","',
  );
  t.equal(parseError('a 1 + 2'), 'f.rb:1: unexpected "+" after the value of a');
  t.equal(parseError('a "x".upcase'), 'f.rb:1: unexpected ".upcase" after the value of a');
  t.equal(parseError('a 1; b 2'), 'f.rb:1: unexpected ";" after the value of a');
  t.equal(parseError('a\nb 1'), 'f.rb:1: a has no value');
  t.equal(parseError('a # nothing'), 'f.rb:1: a has no value');
  t.equal(parseError('a ("x"'), 'f.rb:1: expected ")" after the value of a, found end of file');
});

t.test('number errors', async (t) => {
  t.equal(parseError('a 1__0'), 'f.rb:1: bad number "1__0"');
  t.equal(parseError('a 10_'), 'f.rb:1: bad number "10_"');
  t.equal(parseError('a 0x1F'), 'f.rb:1: bad number "0x1F"');
  t.equal(parseError('a 1.2.3'), 'f.rb:1: bad number "1.2.3"');
  t.equal(parseError('a 0755'), 'f.rb:1: bad number "0755" (a leading 0 makes it octal in Ruby)');
  t.equal(parseError('a 99999999999999999999'), 'f.rb:1: bad number "99999999999999999999" (too large)');
});

t.test('array and hash errors', async (t) => {
  t.equal(parseError('a [\n  1,\n  2\n'), 'f.rb:1: unterminated array');
  t.equal(parseError('a 0\nb({\n "x" => "y",\n'), 'f.rb:2: unterminated hash');
  t.equal(parseError('a [1 2]'), 'f.rb:1: expected "," or "]" in the array, found "2]"');
  t.equal(parseError('a [\n 1,\n 2\n 3\n]'), 'f.rb:4: expected "," or "]" in the array, found "3"');
  t.equal(parseError('a { "k" "v" }'), 'f.rb:1: expected "=>" after the hash key, found "\\"v\\""');
  t.equal(parseError('a { 1 => "v" }'), 'f.rb:1: hash keys must be strings or symbols');
  t.equal(parseError('a {\n "k" => 1,\n k: 2\n}'), 'f.rb:3: duplicate key "k" in the hash');
  t.equal(parseError('a { "__proto__" => "x" }'), 'f.rb:1: the hash key "__proto__" is not allowed');
  t.equal(
    parseError('a [1,, 2]'),
    'f.rb:1: expected a value (string, number, true, false, nil, symbol, array or hash), found ","',
  );
});

t.test('a ConfigError carries the file, line and setting', async (t) => {
  const err = configErrorOf(() => parseSettings('good 1\nbad "x', 'conf/client.rb'));
  t.ok(err instanceof Error);
  t.equal(err.name, 'ConfigError');
  t.equal(err.file, 'conf/client.rb');
  t.equal(err.line, 2);
  t.equal(err.setting, 'bad');
  t.equal(err.message, 'conf/client.rb:2: unterminated string');
  t.equal(configErrorOf(() => parseSettings('123', 'f.rb')).setting, undefined);
});

const schema = z.object({
  port: z.number().int().min(1).max(65535).describe('a port number from 1 to 65535').default(80),
  name: z.string().describe('a name').default('web'),
  tags: z
    .array(z.string())
    .describe('an array of strings')
    .default(() => []),
  level: z.enum(['debug', 'info']).default('info'),
});
const read = (text: string, options = {}) => readSettings(text, 'f.rb', schema, options);
const readError = (text: string, options = {}): string => configErrorOf(() => read(text, options)).message;

t.test('readSettings applies defaults and returns typed values', async (t) => {
  t.strictSame(read(''), { port: 80, name: 'web', tags: [], level: 'info' });
  t.strictSame(read('port 8080\ntags ["a", :b]\nlevel :debug'), {
    port: 8080,
    name: 'web',
    tags: ['a', 'b'],
    level: 'debug',
  });
});

t.test('readSettings names the setting, its line and what was expected', async (t) => {
  t.equal(readError('name "x"\nport "80"'), 'f.rb:2: port: expected a port number from 1 to 65535, got "80"');
  t.equal(readError('port 70000'), 'f.rb:1: port: expected a port number from 1 to 65535, got 70000');
  t.equal(readError('port 8.5'), 'f.rb:1: port: expected a port number from 1 to 65535, got 8.5');
  t.equal(readError('tags [1, nil]'), 'f.rb:1: tags: expected an array of strings, got [1, nil]');
  t.equal(readError('name STDOUT'), 'f.rb:1: name: expected a name, got STDOUT');
  t.equal(readError('name { "a" => true }'), 'f.rb:1: name: expected a name, got {"a" => true}');
  t.equal(
    readError(`tags "${'x'.repeat(80)}"`),
    `f.rb:1: tags: expected an array of strings, got "${'x'.repeat(56)}...`,
  );
  // Without a description the schema's own message is used.
  t.match(readError('level :trace'), /^f\.rb:1: level: Invalid option: .*, got "trace"$/);
});

t.test('readSettings reports the earliest bad line first', async (t) => {
  t.equal(readError('name 1\nport 0'), 'f.rb:1: name: expected a name, got 1');
  t.equal(readError('port 0\nname 1'), 'f.rb:1: port: expected a port number from 1 to 65535, got 0');
});

t.test('an unknown setting is an error, or skipped when not strict', async (t) => {
  t.equal(readError('port 1\ncolour "red"'), 'f.rb:2: unknown setting colour');
  t.strictSame(read('colour "red"\nport 1', { strict: false }), { port: 1, name: 'web', tags: [], level: 'info' });
  t.equal(
    readError('colour = "red"', { strict: false }),
    'f.rb:1: "colour =" assignment is not supported; write: colour VALUE',
  );
  t.equal(readError('constructor 1'), 'f.rb:1: unknown setting constructor');
});

t.test('a setting given twice is an error, also under another name', async (t) => {
  t.equal(readError('port 1\n\nport 2'), 'f.rb:3: port is already set on line 1');
  t.equal(
    readError('port 1\nlisten_port 2', { aliases: { listen_port: 'port' } }),
    'f.rb:2: listen_port is already set as port on line 1',
  );
  t.strictSame(read('listen_port 2', { aliases: { listen_port: 'port' } }).port, 2);
  t.strictSame(read('colour 1\ncolour 2\nport 3', { strict: false }).port, 3);
});

t.test('a required setting missing from the file names the file', async (t) => {
  const required = z.object({ server_url: z.string().describe('a URL') });
  const err = configErrorOf(() => readSettings('# empty', 'c.rb', required));
  t.equal(err.message, 'c.rb: missing server_url: expected a URL');
  t.equal(err.line, 0);
  t.equal(err.setting, 'server_url');
});
