// Seeded fuzzing of every parser of outside input: the search query parser, the settings files (server, client
// and cli), and the ZeroMQ frame decoder. Each must answer any input with a value or its own error type, never
// with anything else. The seed and count are fixed so a failure reproduces; `bench/fuzz.ts` runs longer.
import fc from 'fast-check';
import t from 'tap';
import { cliConfigSchema } from '../../src/config/cli-config.js';
import { clientConfigSchema } from '../../src/config/client-config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { serverConfigSchema } from '../../src/config/server-config.js';
import { readSettings } from '../../src/config/settings-file.js';
import { encodeMessage } from '../../src/protocol/frames.js';
import { DROP_REASONS, decodeFrames, type DecodeOptions } from '../../src/protocol/receive.js';
import { ReplayGuard } from '../../src/protocol/replay.js';
import { parseQuery, SearchSyntaxError } from '../../src/search/query.js';
import { FUZZ_RUNS, FUZZ_SEED, queryText, settingsText, zeromqFrames } from '../support/fuzz-inputs.js';

const params = { seed: FUZZ_SEED, numRuns: FUZZ_RUNS };

t.test('the query parser answers a parse or a SearchSyntaxError', async (t) => {
  let parsed = 0;
  fc.assert(
    fc.property(queryText(), (q) => {
      try {
        parseQuery(q);
        parsed++;
      } catch (e) {
        if (!(e instanceof SearchSyntaxError)) throw e;
      }
    }),
    params,
  );
  t.ok(parsed > 0, `some inputs parse (${parsed} of ${FUZZ_RUNS})`);
});

t.test('settings files answer settings or a ConfigError naming the file', async (t) => {
  for (const [name, schema, strict] of [
    ['push-jobs-server.rb', serverConfigSchema, true],
    ['client.rb', clientConfigSchema, false],
    ['config.rb', cliConfigSchema, false],
  ] as const) {
    let errors = 0;
    fc.assert(
      fc.property(settingsText(), (text) => {
        try {
          readSettings(text, name, schema, { strict });
        } catch (e) {
          if (!(e instanceof ConfigError) || !e.message.startsWith(`${name}:`)) throw e;
          errors++;
        }
      }),
      params,
    );
    t.ok(errors > 0 && errors < FUZZ_RUNS, `${name}: ${errors} of ${FUZZ_RUNS} refused, the rest read`);
  }
});

t.test('the ZeroMQ decoder accepts or drops with a known reason, never throws', async (t) => {
  const key = Buffer.alloc(32, 7);
  const opts = (): DecodeOptions => ({
    expectIdentity: true,
    now: Date.UTC(2026, 10, 23),
    keyFor: (org, node) => (org === 'acme' && node === 'web01' ? key : undefined),
    replay: new ReplayGuard(),
    schema: 'client',
  });
  const seen = new Set<string>();
  fc.assert(
    fc.property(
      zeromqFrames((body) => encodeMessage(body, key)),
      (frames) => {
        const r = decodeFrames(frames, opts());
        if (r.ok) seen.add('accepted');
        else if ((DROP_REASONS as readonly string[]).includes(r.reason)) seen.add(r.reason);
        else throw new Error(`unknown drop reason ${r.reason}`);
      },
    ),
    params,
  );
  t.ok(seen.size >= 4, `several outcomes reached: ${[...seen].sort().join(', ')}`);
});
