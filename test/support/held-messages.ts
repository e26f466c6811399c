// A process of its own for zmq-context.test.ts: a Router reads ROUNDS messages from each of CONNECTIONS dealers,
// one a round so that each arrives in a read of its own, keeps every one, and prints how much its resident memory
// grew meanwhile. `own` as the first argument: the sockets receive into memory of their own, as the server's do.
import { context, Dealer, Router } from 'zeromq';
import { connectSocket } from '../../src/protocol/socket-connect.js';
import { receiveIntoOwnMemory, receivesIntoOwnMemory } from '../../src/protocol/zmq-context.js';

const CONNECTIONS = 200;
const ROUNDS = 20;
/** About a heartbeat's size, above zeromq.js's 128 bytes under which a message is copied into the heap anyway. */
const BODY = 'x'.repeat(300);

if (process.argv[2] === 'own') receiveIntoOwnMemory();
context.maxSockets = CONNECTIONS + 16;
const router = new Router({ linger: 0 });
await router.bind('tcp://127.0.0.1:*');
const dealers = Array.from({ length: CONNECTIONS }, () => {
  const dealer = new Dealer({ linger: 0 });
  connectSocket(dealer, router.lastEndpoint ?? '');
  return dealer;
});
const held: Buffer[][] = [];
const round = async () => {
  await Promise.all(dealers.map((d) => d.send(BODY)));
  for (let i = 0; i < CONNECTIONS; i++) held.push(await router.receive());
};
// A first round makes every connection and its read buffer, which both ways have.
await round();
const before = process.memoryUsage().rss;
for (let r = 1; r < ROUNDS; r++) await round();
const grown = process.memoryUsage().rss - before;
const intact = held.every((frames) => frames[1]?.toString() === BODY);
console.log(JSON.stringify({ own: receivesIntoOwnMemory(), held: held.length, intact, grown }));
for (const d of dealers) d.close();
router.close();
