// npm's `prepare` in a checkout (`npm ci`, `npm install`, `npm pack`): compiles the TypeScript into dist/ when
// TypeScript is installed. A production install (`npm ci --omit=dev`) has no TypeScript: it runs the build that is
// already in dist/, and fails with what to do when there is none. The packed package carries dist/ and never runs
// this (npm runs `prepare` for a checkout or a git dependency, not for a tarball).
// Plain JavaScript with no imports beyond Node's, since it runs before anything is built or installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function log(message) {
  process.stderr.write(`prepare: ${message}\n`);
}

/** TypeScript's compiler as installed for this checkout, or undefined. */
function findTsc() {
  try {
    return createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/** The executables of package.json `bin` that dist/ lacks. */
function missingBins() {
  const { bin } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return Object.values(bin).filter((file) => !existsSync(join(root, file)));
}

/** The latest modification time of the files under `dir` whose names end in `suffix`; 0 for none. */
function newest(dir, suffix) {
  let latest = 0;
  if (!existsSync(dir)) return latest;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(suffix)) {
      latest = Math.max(latest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
    }
  }
  return latest;
}

const tsc = findTsc();
if (tsc !== undefined) {
  const built = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  process.exit(built.status ?? 1);
}
const missing = missingBins();
if (missing.length > 0) {
  log(
    [
      `TypeScript is not installed (an install without the devDependencies) and dist/ holds no build (${missing[0]} is missing).`,
      'Either install with the devDependencies first (`npm ci` builds dist/; `npm ci --omit=dev` after it keeps that build),',
      'or install the packed package, which carries its build: `npm pack`, then `npm install -g infra-server-VERSION.tgz`.',
    ].join('\n  '),
  );
  process.exit(1);
}
const sources = Math.max(newest(join(root, 'src'), '.ts'), newest(join(root, 'actors'), '.ts'));
const build = Math.max(newest(join(root, 'dist', 'src'), '.js'), newest(join(root, 'dist', 'actors'), '.js'));
if (sources > build) {
  log('TypeScript is not installed: using dist/ as it is, though sources are newer (`npm run build` updates it).');
} else {
  log('TypeScript is not installed: using the build already in dist/.');
}
