// wrk, the load generator of the HTTP benchmarks: one signed request replayed (signed once: a signature stays valid
// within the clock skew, so signing is the client's cost, not the server's), and its figures read from its output.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signRequest } from '../src/auth/signed-headers.js';

/** Both servers of api-peer.bench.ts check it; goiardi does not take 1.3. */
export const SIGN_VERSION = '1.1';

export interface SignedTarget {
  label: string;
  url: string;
  path: string;
  userId: string;
  key: string;
}

export interface WrkFigures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

export function onPath(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** wrk with one thread against `t` (its script written under `dir`): requests a second, p50 and p99 in ms. */
export async function wrkSigned(
  dir: string,
  t: SignedTarget,
  connections: number,
  seconds: number,
): Promise<WrkFigures> {
  const headers = signRequest({
    privateKey: t.key,
    userId: t.userId,
    method: 'GET',
    path: t.path,
    version: SIGN_VERSION,
  });
  const script = join(dir, `${t.label.replace(/\W+/g, '-')}.lua`);
  await writeFile(
    script,
    Object.entries(headers)
      .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
      .join('\n'),
  );
  const out = execFileSync(
    'wrk',
    ['-t', '1', '-c', String(connections), '-d', `${seconds}s`, '--latency', '-s', script, `${t.url}${t.path}`],
    { encoding: 'utf8' },
  );
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  return { rps, p50: latencyMs(out, '50'), p99: latencyMs(out, '99'), non2xx };
}

/** A percentile of wrk's latency distribution, in ms. */
function latencyMs(out: string, percentile: string): number {
  const m = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s)$`, 'm').exec(out);
  const scale = { us: 0.001, ms: 1, s: 1000 } as const;
  return m ? Number(m[1]) * scale[m[2] as keyof typeof scale] : NaN;
}
