// The API's share of the open files: between two counts of the files the process holds, every API connection
// opened counts as one more, so a burst is refused (503) once it would reach into node_connection_reserve; the
// next count, a second later, finds what is really open, and connections are taken again. The counts run on a
// manual clock; the connections are stand-ins that hold no file, raised on a stand-in server.
import { EventEmitter } from 'node:events';
import t from 'tap';
import { ConnectionBudget } from '../../src/http/connection-budget.js';
import { countOpenFiles } from '../../src/http/open-files.js';
import { ManualClock } from '../support/manual-clock.js';

const RESERVE = 20;
/** Free files above the reserve at the start: the connections the budget takes before the next count. */
const ROOM = 10;

/** A connection that records how it was answered. */
function connection(): EventEmitter & { answer: string } {
  return Object.assign(new EventEmitter(), {
    remoteAddress: '10.0.0.1',
    answer: 'taken',
    end(text: string) {
      this.answer = text.split('\r\n')[0] ?? '';
    },
    destroy() {
      this.answer = 'closed unanswered';
    },
    setTimeout: () => undefined,
  });
}

const NO_PROC = process.platform !== 'linux' && 'no /proc/self/fd to count the open files in';

t.test(
  'a burst is refused once it reaches into the reserve, and taken again after the next count',
  { skip: NO_PROC },
  async (t) => {
    const open = (await countOpenFiles()) ?? 0;
    const clock = new ManualClock();
    const budget = new ConnectionBudget(
      { maxConnectionsPerAddress: 1000, reserve: RESERVE, files: { soft: open + RESERVE + ROOM, hard: null } },
      clock,
    );
    await budget.start();
    t.teardown(() => budget.stop());
    const server = new EventEmitter() as unknown as Parameters<ConnectionBudget['guard']>[0];
    budget.guard(server, true);
    const burst = Array.from({ length: ROOM + 5 }, () => {
      const socket = connection();
      server.emit('connection', socket);
      return socket;
    });
    t.equal(burst[0]?.answer, 'taken', 'the first connections are taken');
    t.equal(burst.at(-1)?.answer, 'HTTP/1.1 503 Service Unavailable', 'those past the room left are refused');
    t.ok(
      (budget.figures(0).http.refused.node_connection_reserve ?? 0) > 0,
      'and counted by the setting that refused them',
    );

    await clock.advance(999);
    const late = connection();
    server.emit('connection', late);
    t.equal(late.answer, 'HTTP/1.1 503 Service Unavailable', 'still refused until the files are counted again');
    // The next count finds the files the process really holds: the stand-ins hold none.
    await clock.until('the files counted again', () => budget.openFiles < open + ROOM / 2);
    const after = connection();
    server.emit('connection', after);
    t.equal(after.answer, 'taken', 'taken again after the count');
  },
);
