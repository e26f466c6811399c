// The guides name real files: every backticked repository path in README.md, CONTRIBUTING.md and docs/*.md exists,
// and every relative Markdown link leads to a file (and, with a #fragment, to a heading of it).
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root: the nearest folder above this file with a package.json (the test also runs from dist/). */
function repoRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error('no package.json above the test');
  }
}

const ROOT = repoRoot();

/** Where a repository path starts; anything else in backticks (settings, URLs, /etc paths) is not one. */
const PATH_PREFIXES = ['src/', 'actors/', 'test/', 'bench/', 'deploy/', 'docs/', '.ci/'];

/** A path a .gitignore beside it names is written by a tool (`npm run bench` writes bench/latest.md): it need not exist. */
function generated(path: string): boolean {
  const ignore = join(ROOT, dirname(path), '.gitignore');
  if (!existsSync(ignore)) return false;
  const name = path.slice(dirname(path).length + 1);
  return readFileSync(ignore, 'utf8')
    .split('\n')
    .some((line) => line.trim() === name);
}

const guides = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks: commands in a block are examples, not references. */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .filter((line) => {
      if (line.trimStart().startsWith('```')) {
        fenced = !fenced;
        return false;
      }
      return !fenced;
    })
    .join('\n');
}

/** Backticked repository paths: `src/x.ts`, `actors/push/`; globs (`bench/*.bench.ts`) name no one file. */
function repositoryPaths(text: string): string[] {
  const found = new Set<string>();
  for (const [, inner = ''] of prose(text).matchAll(/`([^`\n]+)`/g)) {
    const path = inner.trim();
    if (!PATH_PREFIXES.some((p) => path.startsWith(p))) continue;
    if (!/^[\w./-]+$/.test(path) || path.includes('*')) continue;
    found.add(path);
  }
  return [...found];
}

/** Link targets that are neither absolute URLs nor mail addresses: `docs/x.md`, `x.md#part`, `#part`. */
function relativeLinks(text: string): string[] {
  const found = new Set<string>();
  for (const [, target = ''] of prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    found.add(target);
  }
  return [...found];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsIn(file: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading = ''] of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    anchors.add(anchorOf(heading));
  }
  return anchors;
}

t.test('the path and link finders read what the guides write', async (t) => {
  const text = [
    'See `src/http/app.ts`, `actors/push/` and `bench/*.bench.ts`, not `data_dir/store` or `/etc/infra/client.rb`.',
    '```sh',
    'node --import tsx `src/bin/nothing-here.ts`',
    '```',
    'Read [the protocol](docs/protocol.md#the-rest-api), [here](#quick-start), ![a picture](dashboard.png)',
    'and [a site](https://example.org/x.md).',
  ].join('\n');
  t.strictSame(repositoryPaths(text), ['src/http/app.ts', 'actors/push/']);
  t.strictSame(relativeLinks(text), ['docs/protocol.md#the-rest-api', '#quick-start', 'dashboard.png']);
  t.equal(anchorOf('push-jobs-server.rb'), 'push-jobs-serverrb');
  t.equal(anchorOf("A node's `ack_commit`"), 'a-nodes-ack_commit');
});

for (const guide of guides) {
  const file = join(ROOT, guide);
  const text = readFileSync(file, 'utf8');

  t.test(`every repository path ${guide} names exists`, async (t) => {
    const missing = repositoryPaths(text).filter((p) => !existsSync(join(ROOT, p)) && !generated(p));
    t.strictSame(missing, [], `${guide} names paths that do not exist: ${missing.join(', ')}`);
  });

  t.test(`every relative link in ${guide} leads somewhere`, async (t) => {
    const broken: string[] = [];
    for (const link of relativeLinks(text)) {
      const [path = '', fragment] = link.split('#', 2);
      const target = path === '' ? file : resolve(dirname(file), decodeURI(path));
      if (!existsSync(target)) {
        broken.push(`${link} (no file ${relative(ROOT, target)})`);
        continue;
      }
      if (fragment !== undefined && target.endsWith('.md') && !anchorsIn(target).has(fragment)) {
        broken.push(`${link} (no heading #${fragment} in ${relative(ROOT, target)})`);
      }
    }
    t.strictSame(broken, [], `${guide} has broken links: ${broken.join('; ')}`);
  });
}
