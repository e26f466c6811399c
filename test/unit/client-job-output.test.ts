// Captured output cut to fit a message, never silently: the size rules of the completion message.
import t from 'tap';
import { cutToJsonBytes, fitOutput, jsonBytes, OutputCollector } from '../../src/client/job-output.js';

t.test('the collector keeps the first bytes up to its cap and notes the overflow', async (t) => {
  const c = new OutputCollector(10);
  c.push(Buffer.from('hello '));
  t.equal(c.overflowed, false);
  c.push(Buffer.from('world!'));
  c.push(Buffer.from('more'));
  t.equal(c.text(), 'hello worl');
  t.equal(c.overflowed, true);
  const exact = new OutputCollector(5);
  exact.push(Buffer.from('12345'));
  t.equal(exact.overflowed, false, 'output of exactly the cap is whole');
});

t.test('sizes are counted as JSON bytes: escapes and UTF-8 included', async (t) => {
  t.equal(jsonBytes('abc'), 3);
  t.equal(jsonBytes('a"b\n'), 6);
  t.equal(jsonBytes('\u0001'), 6);
  t.equal(jsonBytes('é'), 2);
  t.equal(jsonBytes('😀'), 4);
});

t.test('a cut never splits a surrogate pair and never exceeds the budget', async (t) => {
  t.equal(cutToJsonBytes('ab😀cd', 5), 'ab', 'the emoji does not fit whole, so it goes');
  t.equal(cutToJsonBytes('ab😀cd', 6), 'ab😀');
  t.equal(cutToJsonBytes('\n\n\n', 5), '\n\n');
  t.equal(cutToJsonBytes('abc', 0), '');
  t.equal(cutToJsonBytes('abcdef', 100, 4), 'abcd', 'the length cap applies too');
  t.equal(cutToJsonBytes('a😀', 100, 2), 'a', 'the length cap does not split a pair either');
});

t.test('output that fits is sent whole and not marked truncated', async (t) => {
  t.strictSame(fitOutput('out', 'err', 6, 100), { stdout: 'out', stderr: 'err', truncated: false });
  t.strictSame(
    fitOutput('out', 'err', 6, 100, true),
    { stdout: 'out', stderr: 'err', truncated: true },
    'a cut while collecting is reported',
  );
});

t.test('when both streams do not fit, a short one stays whole and the long one takes the rest', async (t) => {
  t.strictSame(fitOutput('x'.repeat(100), 'err', 20, 1000), { stdout: 'x'.repeat(17), stderr: 'err', truncated: true });
  t.strictSame(fitOutput('ok', 'y'.repeat(100), 20, 1000), { stdout: 'ok', stderr: 'y'.repeat(18), truncated: true });
  t.strictSame(fitOutput('x'.repeat(100), 'y'.repeat(100), 21, 1000), {
    stdout: 'x'.repeat(10),
    stderr: 'y'.repeat(11),
    truncated: true,
  });
});

t.test('the fitted output is within the budget for any mix of characters', async (t) => {
  const samples = ['"quoted"\n', 'plain', 'ünïcødé', '😀😀', '\u0000\u001f', '\\'];
  const wrong: string[] = [];
  for (let i = 0; i < 200; i++) {
    const pick = (n: number) => Array.from({ length: n }, (_, k) => samples[(i * 7 + k * 3) % samples.length]).join('');
    const [out, err] = [pick(i % 37), pick((i * 5) % 41)];
    const budget = (i * 13) % 120;
    const fitted = fitOutput(out, err, budget, 1000);
    if (jsonBytes(fitted.stdout) + jsonBytes(fitted.stderr) > budget) wrong.push(`sample ${i} exceeds ${budget} bytes`);
    if (!out.startsWith(fitted.stdout) || !err.startsWith(fitted.stderr)) wrong.push(`sample ${i} lost its heads`);
    if (fitted.truncated !== (fitted.stdout !== out || fitted.stderr !== err))
      wrong.push(`sample ${i} misreports truncated`);
  }
  t.strictSame(wrong, []);
});
