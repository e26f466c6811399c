// Messages the server reads cost their own size, not a read buffer each. By default libzmq hands a message over
// inside its connection's read buffer, kept until zeromq.js's garbage collector frees the message: a burst of
// answers from thousands of nodes, each on its own connection, held that many buffers until the next collection.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { z } from 'zod';

const reportSchema = z.object({ own: z.boolean(), held: z.number(), intact: z.boolean(), grown: z.number() });

/** held-messages.js in a fresh process, so that each reading starts from the same memory. */
async function heldMessages(mode: 'own' | 'default'): Promise<z.infer<typeof reportSchema>> {
  const child = fileURLToPath(new URL('../support/held-messages.js', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [child, mode], { timeout: 60_000 });
  return reportSchema.parse(JSON.parse(stdout));
}

t.test('messages read into memory of their own arrive whole and hold far less memory', async (t) => {
  const own = await heldMessages('own');
  const shared = await heldMessages('default');
  t.ok(own.own, 'the option took');
  t.notOk(shared.own, "libzmq's default is the shared read buffer");
  t.equal(own.held, shared.held);
  t.ok(own.intact && shared.intact, 'every message read as it was sent');
  t.ok(
    own.grown * 2 < shared.grown,
    `${own.held} messages held: ${(own.grown / 2 ** 20).toFixed(1)} MB with their own memory, ` +
      `${(shared.grown / 2 ** 20).toFixed(1)} MB in shared read buffers`,
  );
});
