// Worker threads whose module sits next to the module starting them. Compiled, the worker runs the JavaScript
// file with no loaders. Run from the sources (tsx), it is TypeScript, and the worker must register the TypeScript
// loader itself before importing it: a worker does not inherit the loaders of its process.
import { Worker } from 'node:worker_threads';

/** The module `name` beside `base` (an import.meta.url), in the language `base` runs in. */
export function besideModule(base: string, name: string): URL {
  return new URL(`./${name}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base);
}

export function startModuleWorker(url: URL): Worker {
  if (!url.pathname.endsWith('.ts')) return new Worker(url, { execArgv: [] });
  const load = `import('tsx/esm/api').then((tsx) => tsx.register()).then(() => import(${JSON.stringify(url.href)}))`;
  return new Worker(load, { eval: true });
}
