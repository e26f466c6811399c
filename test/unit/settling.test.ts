// Hysteresis for rebalancing: a member back at an address another just left is handed partitions only once it has
// stayed live a while; the members of a new cluster, or one added at a new address, are handed theirs at once.
import t from 'tap';
import type { Member } from '../../src/cluster/members.js';
import { SettlingMembers } from '../../src/cluster/settling.js';

const member = (id: string, url = `http://${id}:10003`): Member => ({ id, url, host: id, pid: 1, started_at: 0 });
const SETTLE = 15_000;
const REMEMBER = 600_000;

t.test('the members of a new cluster, and a member added at a new address, are settled at once', async (t) => {
  const s = new SettlingMembers(SETTLE, REMEMBER);
  t.same([...s.settled([member('a'), member('b')], 0)], ['a', 'b']);
  t.same([...s.settled([member('a'), member('b'), member('c')], 1000)], ['a', 'b', 'c'], 'c is new');
});

t.test('a member restarted at its address waits, then is settled', async (t) => {
  const s = new SettlingMembers(SETTLE, REMEMBER);
  s.settled([member('a'), member('b')], 0);
  s.settled([member('a')], 5000); // b was killed
  const back = member('b2', 'http://b:10003'); // a new process at b's address
  t.same([...s.settled([member('a'), back], 10_000)], ['a'], 'not yet settled when it comes back');
  t.same([...s.settled([member('a'), back], 24_999)], ['a'], 'nor just short of the settle time');
  t.same([...s.settled([member('a'), back], 25_000)], ['a', 'b2'], 'settled once it stayed that long');
});

t.test('a member that goes again before it settled starts over when it comes back', async (t) => {
  const s = new SettlingMembers(SETTLE, REMEMBER);
  s.settled([member('a'), member('b')], 0);
  s.settled([member('a')], 1000);
  s.settled([member('a'), member('b')], 2000); // woken from a pause
  s.settled([member('a')], 10_000); // paused again
  t.same([...s.settled([member('a'), member('b')], 20_000)], ['a']);
  t.same([...s.settled([member('a'), member('b')], 35_000)], ['a', 'b']);
});

t.test('an address left long ago is forgotten: a member there is new', async (t) => {
  const s = new SettlingMembers(SETTLE, REMEMBER);
  s.settled([member('a'), member('b')], 0);
  s.settled([member('a')], 1000);
  t.same([...s.settled([member('a'), member('b3', 'http://b:10003')], 1000 + REMEMBER)], ['a', 'b3']);
});
