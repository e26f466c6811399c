// The linter: ESLint's and typescript-eslint's recommended rules over the whole tree; formatting is Prettier's.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const SLEEP =
  'unit tests never wait for time: give the code a Timers (src/lib/timers.ts) and move a ManualClock ' +
  '(test/support/manual-clock.ts), or wait for an event; tests of real time go in test/integration';
const TIMING = 'speed is never in a unit test: measure it in bench/';
const SOCKETS = 'unit tests open no sockets: a test of a real socket goes in test/integration';
const PROCESSES = 'unit tests start no processes or threads: a test of a real one goes in test/integration';

export default tseslint.config(
  { ignores: ['dist/', '.tap/', '.infra-data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_name` marks a deliberately unused binding (a destructured field left out, an ignored parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // CONTRIBUTING.md: unit tests are pure code with no sockets or timers; they never sleep, and speed is never in
    // their assertions. Code with timers takes a Timers (src/lib/timers.ts) and its unit test moves a ManualClock
    // (test/support/manual-clock.ts); tests of real sockets, processes and time go in test/integration, speed in bench/.
    files: ['test/unit/**'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: SLEEP },
        { name: 'setInterval', message: SLEEP },
        { name: 'performance', message: TIMING },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...['timers', 'timers/promises'].flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: SLEEP })),
            ...['perf_hooks', 'node:perf_hooks'].map((name) => ({ name, message: TIMING })),
            ...['net', 'http', 'https', 'http2', 'dgram', 'tls']
              .flatMap((m) => [m, `node:${m}`])
              .concat(['zeromq'])
              .map((name) => ({ name, message: SOCKETS })),
            ...['child_process', 'worker_threads', 'cluster']
              .flatMap((m) => [m, `node:${m}`])
              .map((name) => ({ name, message: PROCESSES })),
          ],
          patterns: [
            {
              group: ['**/support/deadline.js'],
              message: `until() polls in real time. ${SLEEP}`,
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'CallExpression[callee.name=/^(sleep|delay|wait|pause)$/]', message: SLEEP },
        { selector: 'CallExpression[callee.property.name=/^(sleep|delay)$/]', message: SLEEP },
        {
          selector: 'MemberExpression[object.name=/^(globalThis|global)$/][property.name=/^(setTimeout|setInterval)$/]',
          message: SLEEP,
        },
        { selector: "MemberExpression[object.name='process'][property.name='hrtime']", message: TIMING },
        {
          selector:
            "BinaryExpression[operator='-'] > CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: TIMING,
        },
      ],
    },
  },
  {
    // One concern per module and per function: a file past 400 lines or a function past 80 holds more than one.
    // Declarative tables are object literals, not functions, and so are not counted.
    files: ['src/**/*.ts', 'src/**/*.tsx', 'actors/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
