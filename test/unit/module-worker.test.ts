// Worker threads started from the TypeScript sources (as the benchmarks and `node --import tsx` run the server):
// each must find its TypeScript module and the loader for it, not the compiled file's name beside the source.
import t from 'tap';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs `code` as an ES module from the repository root with the TypeScript loader; resolves with its stdout. */
function runFromSources(code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', code],
      { cwd: root, timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim())),
    );
  });
}

t.test('the signature pool checks on its worker when run from the sources', async (t) => {
  const out = await runFromSources(`
    import { generateKeyPairSync } from 'node:crypto';
    import { SignaturePool } from './src/auth/signature-pool.ts';
    import { readAuthHeaders, signatureCheckOf, signRequest } from './src/auth/signed-headers.ts';
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const headers = signRequest({ privateKey, userId: 'u', method: 'GET', path: '/a', version: '1.1' });
    const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const read = readAuthHeaders((name) => lower.get(name), Date.now(), 900);
    const crashes = [];
    const pool = new SignaturePool({ threads: 1, offload: () => true, observer: { workerCrashed: (e) => crashes.push(String(e)) } });
    const answer = await pool.check(signatureCheckOf(read.auth, [publicKey], 'GET', '/a', ''));
    await pool.close();
    console.log(JSON.stringify({ answer, crashes, unchecked: pool.unchecked }));
  `);
  t.same(JSON.parse(out), { answer: 0, crashes: [], unchecked: 0 }, 'answered by the worker, which did not die');
});

t.test('the file thread writes when run from the sources', async (t) => {
  const dir = t.testdir({});
  const out = await runFromSources(`
    import { readFileSync } from 'node:fs';
    import { FileThread } from './src/store/file-thread.ts';
    const file = ${JSON.stringify(`${dir}/written`)};
    await new FileThread().run([{ op: 'replace', path: file, content: 'hello' }]);
    console.log(readFileSync(file, 'utf8'));
  `);
  t.equal(out, 'hello');
});
