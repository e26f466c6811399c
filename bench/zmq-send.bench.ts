// CPU of this process per message a Dealer writes over CurveZMQ to a Router in a child process: written in a
// burst, one after another, or alone, a pause between each. A message written alone wakes libzmq's I/O thread
// for itself; that is why the load tester gathers its nodes' answers for a millisecond (src/loadtest/shared-link.ts).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { curveKeyPair, Dealer, Router } from 'zeromq';
import { report } from './support.js';

const BURST = 20_000;
const ALONE = 2_000;
const HEADER = `Version:2.0;SigningMethod:hmac_sha256;Signature:${'A'.repeat(43)}=`;
const BODY = 'x'.repeat(250);

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const pause = (ms: number) => new Promise<void>((r) => (ms === 0 ? setImmediate(r) : setTimeout(r, ms)));

/** CPU µs per message for `count` writes with `between` ms of pause after each (none: a burst). */
async function perMessage(dealer: Dealer, count: number, between?: number): Promise<number> {
  const before = cpuMs();
  for (let i = 0; i < count; i++) {
    await dealer.send([HEADER, BODY]);
    if (between !== undefined) await pause(between);
  }
  const used = cpuMs() - before;
  if (between === undefined) return (used * 1000) / count;
  // The pauses cost something of their own: measured alone and taken off.
  const idle = cpuMs();
  for (let i = 0; i < count; i++) await pause(between);
  return ((used - (cpuMs() - idle)) * 1000) / count;
}

async function main(): Promise<void> {
  const server = curveKeyPair();
  const client = curveKeyPair();
  const child = fork(fileURLToPath(import.meta.url), ['reader'], {
    env: { ...process.env, CURVE_SECRET: server.secretKey },
  });
  const endpoint = await new Promise<string>((resolve) => child.once('message', (m) => resolve(String(m))));
  const dealer = new Dealer({
    linger: 0,
    immediate: true,
    sendTimeout: 0,
    sendHighWaterMark: 100_000,
    curveServerKey: server.publicKey,
    curvePublicKey: client.publicKey,
    curveSecretKey: client.secretKey,
  });
  dealer.connect(endpoint);
  await pause(500);
  await perMessage(dealer, 2000); // warm-up
  console.log('| writes | CPU µs per message (this process, its I/O thread included) |');
  console.log('|---|---:|');
  const row = (what: string, us: number) => {
    console.log(`| ${what} | ${us.toFixed(1)} |`);
    report(`a Dealer's message over CurveZMQ, CPU: ${what}`, `${us.toFixed(1)} µs`);
  };
  row(`${BURST} in a burst`, await perMessage(dealer, BURST));
  await pause(300);
  row(`${ALONE} alone, setImmediate between`, await perMessage(dealer, ALONE, 0));
  row(`${ALONE} alone, 1 ms between`, await perMessage(dealer, ALONE, 1));
  dealer.close();
  child.kill();
}

if (process.argv[2] === 'reader') {
  const router = new Router({ linger: 0, curveServer: true, curveSecretKey: process.env.CURVE_SECRET ?? '' });
  await router.bind('tcp://127.0.0.1:*');
  process.send?.(router.lastEndpoint);
  for await (const _message of router);
} else {
  await main();
}
