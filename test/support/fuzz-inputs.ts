// Inputs for the seeded fuzz tests and the longer fuzz run in bench/: text and frames that are mostly almost
// right, since a parser's mistakes hide near its grammar, with some plain noise.
import fc from 'fast-check';

export const FUZZ_SEED = Number(process.env.INFRA_FUZZ_SEED ?? 20261123);
export const FUZZ_RUNS = Number(process.env.INFRA_FUZZ_RUNS ?? 2000);

const QUERY_TOKENS = [
  'name:web*',
  'role:db',
  'chef_environment:_default',
  'AND',
  'OR',
  'NOT',
  '&&',
  '||',
  '!',
  '(',
  ')',
  '"a b"',
  '"',
  '[1 TO 5]',
  '{a TO z}',
  '[',
  ']',
  '{',
  '}',
  'TO',
  '*:*',
  '*',
  '?',
  '-',
  '+',
  ':',
  '\\',
  '\\:',
  'run_list:recipe\\[x\\]',
  'a:b:c',
  '^2',
  '~',
  'x',
  ' ',
];

export function queryText(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.array(fc.constantFrom(...QUERY_TOKENS), { maxLength: 12 }).map((ts) => ts.join(' ')),
    fc.array(fc.constantFrom(...QUERY_TOKENS), { maxLength: 12 }).map((ts) => ts.join('')),
  );
}

const SETTING_NAMES = [
  'api_port',
  'heartbeat_interval',
  'server_name',
  'data_dir',
  'redis_url',
  'log_level',
  'curve_encryption',
  'store_timeout',
  'node_name',
  'whitelist',
  'client_key',
  'chef_server_url',
  'server_url',
  'log_location',
  'file_dir',
  'max_json_depth',
  'voting_timeout',
  'unknown_thing',
];
const VALUES = [
  '1',
  '0',
  '-1',
  '10_003',
  '1.5',
  '1e9',
  '"text"',
  "'text'",
  '"unterminated',
  ':info',
  ':bogus',
  'true',
  'false',
  'nil',
  'STDOUT',
  '{ "a" => "b" }',
  '({ "a" => "b", })',
  '{ a: 1 }',
  '[1, 2]',
  '"redis://h:1/2"',
  '"http://x/organizations/o"',
  '"\\u00e9"',
  '#{x}',
  '"a" "b"',
  '((1))',
  '',
  '# comment',
];

export function settingsText(): fc.Arbitrary<string> {
  const line = fc.oneof(
    fc
      .tuple(fc.constantFrom(...SETTING_NAMES), fc.constantFrom(' ', '(', ' = ', '  '), fc.constantFrom(...VALUES))
      .map(([n, sep, v]) => `${n}${sep}${v}${sep === '(' ? ')' : ''}`),
    fc.string({ maxLength: 30 }),
  );
  return fc.array(line, { maxLength: 6 }).map((lines) => lines.join('\n'));
}

/** ZeroMQ message frames: noise, and signed client messages with fields bent out of shape. */
export function zeromqFrames(sign: (body: object) => [Buffer, Buffer]): fc.Arbitrary<Buffer[]> {
  const identity = fc.uint8Array({ minLength: 0, maxLength: 300 }).map((a) => Buffer.from(a));
  const noise = fc.array(
    fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
    { maxLength: 4 },
  );
  const field = fc.oneof(
    fc.constant(undefined),
    fc.string({ maxLength: 20 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
  );
  const body = fc.record({
    type: fc.oneof(fc.constantFrom('heartbeat', 'ack_commit', 'nack_commit', 'succeeded', 'failed', 'aborted'), field),
    org: fc.oneof(fc.constant('acme'), field),
    node: fc.oneof(fc.constant('web01'), field),
    incarnation_id: fc.oneof(fc.uuid(), field),
    sequence: fc.oneof(fc.nat(), field),
    timestamp: fc.oneof(fc.constant('Mon, 23 Nov 2026 00:00:00 GMT'), field),
    job_state: fc.oneof(fc.constantFrom('idle', 'running'), field),
    job_id: fc.oneof(fc.constant(null), fc.stringMatching(/^[0-9a-f]{32}$/), field),
  });
  const signed = fc.tuple(identity, body).map(([id, b]) => {
    const clean = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
    return [id, ...sign(clean)];
  });
  const tampered = fc.tuple(signed, fc.nat(), fc.nat(255)).map(([frames, at, byte]) => {
    const copy = frames.map((f) => Buffer.from(f));
    const target = copy[1 + (at % 2)];
    if (target !== undefined && target.length > 0) target[at % target.length] = byte;
    return copy;
  });
  return fc.oneof(noise, signed, tampered);
}
