// Worker threads and child processes started from the TypeScript sources (as the benchmarks, and
// `node --import tsx`, run the server and the load tester): each must find its TypeScript module and the loader for
// it, whatever the working folder, not the compiled file's name beside the source.
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const source = (path: string): string => JSON.stringify(pathToFileURL(`${root}${path}`).href);
const loader = pathToFileURL(`${root}node_modules/tsx/dist/loader.mjs`).href;

/** A folder outside the repository, where no node_modules folder above it holds tsx. */
function outside(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'infra-sibling-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `code` as an ES module with the TypeScript loader, in `cwd` (outside the repository); resolves with stdout. */
function runFromSources(code: string, cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', loader, '--input-type=module', '-e', code],
      { cwd, timeout: 60_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim())),
    );
  });
}

t.test('the signature pool checks on its worker when run from the sources', async (t) => {
  const out = await runFromSources(
    `
    import { generateKeyPairSync } from 'node:crypto';
    const { SignaturePool } = await import(${source('src/auth/signature-pool.ts')});
    const { readAuthHeaders, signatureCheckOf, signRequest } = await import(${source('src/auth/signed-headers.ts')});
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const headers = signRequest({ privateKey, userId: 'u', method: 'GET', path: '/a', version: '1.1' });
    const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const read = readAuthHeaders((name) => lower.get(name), Date.now(), 900);
    const crashes = [];
    const pool = new SignaturePool({ threads: 1, offload: () => true, observer: { workerCrashed: (e) => crashes.push(String(e)) } });
    const answer = await pool.check(signatureCheckOf(read.auth, [publicKey], 'GET', '/a', ''));
    await pool.close();
    console.log(JSON.stringify({ answer, crashes, unchecked: pool.unchecked }));
  `,
    outside(t),
  );
  t.same(JSON.parse(out), { answer: 0, crashes: [], unchecked: 0 }, 'answered by the worker, which did not die');
});

t.test('the file thread writes when run from the sources', async (t) => {
  const dir = outside(t);
  const out = await runFromSources(
    `
    import { readFileSync } from 'node:fs';
    const { FileThread } = await import(${source('src/store/file-thread.ts')});
    await new FileThread().run([{ op: 'replace', path: 'written', content: 'hello' }]);
    console.log(readFileSync('written', 'utf8'));
  `,
    dir,
  );
  t.equal(out, 'hello');
});

t.test('a child process runs a TypeScript entry beside its starter, from another working folder', async (t) => {
  const out = await runFromSources(
    `
    import { execFileSync } from 'node:child_process';
    import { fileURLToPath } from 'node:url';
    const { besideModule, nodeArgsFor } = await import(${source('src/lib/sibling-module.ts')});
    const server = fileURLToPath(besideModule(${source('src/loadtest/local-server.ts')}, '../bin/infra-server'));
    console.log(execFileSync(process.execPath, [...nodeArgsFor(server), '--version'], { encoding: 'utf8' }));
  `,
    outside(t),
  );
  t.match(out, /^\d+\.\d+\.\d+$/, 'the server from the sources printed its version');
});
