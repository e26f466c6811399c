// Dashboard sessions and the sign-in throttle on a clock the test moves: sessions lapse after the timeout without
// a request, and failed sign-ins make the next attempts wait, longer with each failure, per name and per address.
import t from 'tap';
import { MemorySessions, sameToken } from '../../src/http/ui/sessions.js';
import { MemorySignInThrottle } from '../../src/http/ui/sign-in-throttle.js';

function clock(start = 1_000_000) {
  const c = { now: start, tick: (ms: number) => void (c.now += ms) };
  return c;
}

t.test('a session lasts the timeout after its last request, then is gone', async (t) => {
  const c = clock();
  const sessions = new MemorySessions(60_000, () => c.now);
  const s = await sessions.create('olga');
  t.match(s.id, /^[A-Za-z0-9_-]{43}$/);
  t.not(s.csrf, s.id, 'the CSRF token is not the session id');
  c.tick(59_000);
  t.equal((await sessions.use(s.id))?.username, 'olga', 'used within the timeout');
  c.tick(59_000);
  t.equal((await sessions.use(s.id))?.username, 'olga', 'each request starts the timeout again');
  c.tick(60_000);
  t.equal(await sessions.use(s.id), undefined, 'lapsed');
  t.equal(await sessions.use(undefined), undefined);
});

t.test('a dropped session opens nothing; another stays', async (t) => {
  const sessions = new MemorySessions(60_000, () => 0);
  const a = await sessions.create('olga');
  const b = await sessions.create('olga');
  await sessions.drop(a.id);
  t.equal(await sessions.use(a.id), undefined);
  t.equal((await sessions.use(b.id))?.id, b.id);
});

t.test('tokens compare whole and exact', async (t) => {
  t.ok(sameToken('abc', 'abc'));
  t.notOk(sameToken('abd', 'abc'));
  t.notOk(sameToken('ab', 'abc'));
  t.notOk(sameToken(undefined, 'abc'));
  t.notOk(sameToken('', 'abc'));
});

t.test('five failures for one name make it wait, twice as long after each further failure', async (t) => {
  const c = clock();
  const throttle = new MemorySignInThrottle(() => c.now);
  for (let i = 0; i < 4; i++) await throttle.failed('wanda', '10.0.0.1');
  t.equal(await throttle.waitMs('wanda', '10.0.0.1'), 0, 'four failures: no wait');
  await throttle.failed('wanda', '10.0.0.1');
  t.equal(await throttle.waitMs('wanda', '10.0.0.1'), 1000, 'the fifth: one second');
  t.equal(await throttle.waitMs('wanda', '10.0.0.2'), 1000, 'from any address');
  t.equal(await throttle.waitMs('olga', '10.0.0.1'), 0, 'other names are not held back');
  c.tick(1000);
  t.equal(await throttle.waitMs('wanda', '10.0.0.1'), 0);
  await throttle.failed('wanda', '10.0.0.1');
  t.equal(await throttle.waitMs('wanda', '10.0.0.1'), 2000, 'the sixth: two seconds');
  for (let i = 0; i < 20; i++) await throttle.failed('wanda', '10.0.0.3');
  t.equal(await throttle.waitMs('wanda', '10.0.0.1'), 5 * 60_000, 'at most five minutes');
});

t.test('a right password clears the name; old failures are forgotten', async (t) => {
  const c = clock();
  const throttle = new MemorySignInThrottle(() => c.now);
  for (let i = 0; i < 4; i++) await throttle.failed('rick', '10.0.0.1');
  await throttle.succeeded('rick');
  await throttle.failed('rick', '10.0.0.1');
  t.equal(await throttle.waitMs('rick', '10.0.0.9'), 0, 'counting starts again after a sign-in');
  for (let i = 0; i < 3; i++) await throttle.failed('rick', '10.0.0.1');
  c.tick(15 * 60_000);
  await throttle.failed('rick', '10.0.0.1');
  t.equal(await throttle.waitMs('rick', '10.0.0.9'), 0, 'failures 15 minutes old no longer count');
});

t.test('twenty failures from one address make every name wait there', async (t) => {
  const throttle = new MemorySignInThrottle(() => 0);
  for (let i = 0; i < 20; i++) await throttle.failed(`user${i}`, '10.0.0.7');
  t.equal(await throttle.waitMs('someone-else', '10.0.0.7'), 1000);
  t.equal(await throttle.waitMs('someone-else', '10.0.0.8'), 0);
});
