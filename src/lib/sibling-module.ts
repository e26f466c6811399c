// Modules started beside the module that starts them, as a worker thread or a child process. Compiled, they run as
// JavaScript with no loaders. Run from the sources (tsx), they are TypeScript and need the TypeScript loader:
// a worker does not inherit its process's loaders, and a child given `--import tsx` would look for the package
// from its own working folder. So the loader is named by the absolute address it has from here.
import { Worker } from 'node:worker_threads';

const fromSources = (url: URL | string): boolean => String(url).endsWith('.ts');

/** The module `name` beside `base` (an import.meta.url), in the language `base` runs in. */
export function besideModule(base: string, name: string): URL {
  return new URL(`./${name}.${fromSources(base) ? 'ts' : 'js'}`, base);
}

export function startModuleWorker(url: URL): Worker {
  if (!fromSources(url)) return new Worker(url, { execArgv: [] });
  const api = import.meta.resolve('tsx/esm/api');
  const load = `import(${JSON.stringify(api)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(url.href)}))`;
  return new Worker(load, { eval: true });
}

/** Node's arguments to run the module at `file` (a path) in a child process, whatever its working folder. */
export function nodeArgsFor(file: string): string[] {
  return fromSources(file) ? ['--import', import.meta.resolve('tsx'), file] : [file];
}
