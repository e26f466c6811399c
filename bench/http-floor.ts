// The floor of api-peer.bench.ts: Node's own HTTP server, in a process of its own, answering every request with
// one fixed answer (the bytes of the job the server is asked for), kept alive, and nothing else; with a public key
// it also checks each request's signature with the server's own code, inline (the headers read and the clock skew
// checked by `readAuthHeaders`, then `verifyRequest`: the canonical string and the RSA operation), and answers 401
// when it does not match. What any server on Node's HTTP module reaches on one thread, with and without
// the check.
//   node --import tsx bench/http-floor.ts PORT ANSWER_FILE [PUBLIC_KEY_FILE]
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { readAuthHeaders, verifyRequest } from '../src/auth/signed-headers.js';

const [port, answerFile, keyFile] = process.argv.slice(2);
if (port === undefined || answerFile === undefined) {
  console.error('usage: node --import tsx bench/http-floor.ts PORT ANSWER_FILE [PUBLIC_KEY_FILE]');
  process.exit(2);
}
const answer = readFileSync(answerFile);
const key: KeyObject | undefined = keyFile === undefined ? undefined : createPublicKey(readFileSync(keyFile, 'utf8'));
const SKEW_SECONDS = 900;

function signed(req: IncomingMessage, publicKey: KeyObject): boolean {
  const read = readAuthHeaders(
    (name) => {
      const v = req.headers[name];
      return typeof v === 'string' ? v : undefined;
    },
    Date.now(),
    SKEW_SECONDS,
  );
  return read.ok && verifyRequest(read.auth, [publicKey], req.method ?? '', req.url ?? '', '') === 0;
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
