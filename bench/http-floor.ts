// The floor of api-peer.bench.ts: Node's own HTTP server, in a process of its own, answering every request with
// one fixed answer (the bytes of the job the server is asked for), kept alive, and nothing else; with a public key
// it also checks each request's signature as protocol 1.1 says (the canonical string of the method, hashed path,
// content hash, timestamp and hashed user id, against the X-Ops-Authorization-N headers decrypted with the key),
// and answers 401 when it does not match. What any server on Node's HTTP module reaches on one thread, with and
// without the check.
//   node --import tsx bench/http-floor.ts PORT ANSWER_FILE [PUBLIC_KEY_FILE]
import { createHash, createPublicKey, publicDecrypt, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';

const [port, answerFile, keyFile] = process.argv.slice(2);
const answer = readFileSync(answerFile ?? '');
const key: KeyObject | undefined = keyFile === undefined ? undefined : createPublicKey(readFileSync(keyFile, 'utf8'));

const sha1 = (text: string): string => createHash('sha1').update(text).digest('base64');

function signed(req: IncomingMessage, publicKey: KeyObject): boolean {
  const h = req.headers;
  let joined = '';
  for (let i = 1; ; i++) {
    const line = h[`x-ops-authorization-${i}`];
    if (typeof line !== 'string') break;
    joined += line;
  }
  const canonical = [
    `Method:${req.method ?? ''}`,
    `Hashed Path:${sha1((req.url ?? '').split('?')[0] ?? '')}`,
    `X-Ops-Content-Hash:${String(h['x-ops-content-hash'])}`,
    `X-Ops-Timestamp:${String(h['x-ops-timestamp'])}`,
    `X-Ops-UserId:${sha1(String(h['x-ops-userid']))}`,
  ].join('\n');
  try {
    return publicDecrypt(publicKey, Buffer.from(joined, 'base64')).toString() === canonical;
  } catch {
    return false;
  }
}

const server = createServer({ keepAlive: true }, (req, res) => {
  if (key !== undefined && !signed(req, key)) {
    res.writeHead(401).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
  res.end(answer);
});
server.listen(Number(port), '127.0.0.1', () => console.log('listening'));
// An exit of its own on a signal, so that a CPU profile (node --cpu-prof) is written.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
