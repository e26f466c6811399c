// Dashboard sessions and the sign-in throttle on a clock the test moves: sessions lapse after the timeout without
// a request, and failed sign-ins make the next attempts wait, longer with each failure, per name and per address.
import t from 'tap';
import { sameToken, SessionStore } from '../../src/http/ui/sessions.js';
import { SignInThrottle } from '../../src/http/ui/sign-in-throttle.js';

function clock(start = 1_000_000) {
  const c = { now: start, tick: (ms: number) => void (c.now += ms) };
  return c;
}

t.test('a session lasts the timeout after its last request, then is gone', async (t) => {
  const c = clock();
  const sessions = new SessionStore(60_000, () => c.now);
  const s = sessions.create('olga');
  t.match(s.id, /^[A-Za-z0-9_-]{43}$/);
  t.not(s.csrf, s.id, 'the CSRF token is not the session id');
  c.tick(59_000);
  t.equal(sessions.use(s.id)?.username, 'olga', 'used within the timeout');
  c.tick(59_000);
  t.equal(sessions.use(s.id)?.username, 'olga', 'each request starts the timeout again');
  c.tick(60_000);
  t.equal(sessions.use(s.id), undefined, 'lapsed');
  t.equal(sessions.use(undefined), undefined);
});

t.test('a dropped session opens nothing; another stays', async (t) => {
  const sessions = new SessionStore(60_000, () => 0);
  const a = sessions.create('olga');
  const b = sessions.create('olga');
  sessions.drop(a.id);
  t.equal(sessions.use(a.id), undefined);
  t.equal(sessions.use(b.id)?.id, b.id);
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
  const throttle = new SignInThrottle(() => c.now);
  for (let i = 0; i < 4; i++) throttle.failed('wanda', '10.0.0.1');
  t.equal(throttle.waitMs('wanda', '10.0.0.1'), 0, 'four failures: no wait');
  throttle.failed('wanda', '10.0.0.1');
  t.equal(throttle.waitMs('wanda', '10.0.0.1'), 1000, 'the fifth: one second');
  t.equal(throttle.waitMs('wanda', '10.0.0.2'), 1000, 'from any address');
  t.equal(throttle.waitMs('olga', '10.0.0.1'), 0, 'other names are not held back');
  c.tick(1000);
  t.equal(throttle.waitMs('wanda', '10.0.0.1'), 0);
  throttle.failed('wanda', '10.0.0.1');
  t.equal(throttle.waitMs('wanda', '10.0.0.1'), 2000, 'the sixth: two seconds');
  for (let i = 0; i < 20; i++) throttle.failed('wanda', '10.0.0.3');
  t.equal(throttle.waitMs('wanda', '10.0.0.1'), 5 * 60_000, 'at most five minutes');
});

t.test('a right password clears the name; old failures are forgotten', async (t) => {
  const c = clock();
  const throttle = new SignInThrottle(() => c.now);
  for (let i = 0; i < 4; i++) throttle.failed('rick', '10.0.0.1');
  throttle.succeeded('rick');
  throttle.failed('rick', '10.0.0.1');
  t.equal(throttle.waitMs('rick', '10.0.0.9'), 0, 'counting starts again after a sign-in');
  for (let i = 0; i < 3; i++) throttle.failed('rick', '10.0.0.1');
  c.tick(15 * 60_000);
  throttle.failed('rick', '10.0.0.1');
  t.equal(throttle.waitMs('rick', '10.0.0.9'), 0, 'failures 15 minutes old no longer count');
});

t.test('twenty failures from one address make every name wait there', async (t) => {
  const throttle = new SignInThrottle(() => 0);
  for (let i = 0; i < 20; i++) throttle.failed(`user${i}`, '10.0.0.7');
  t.equal(throttle.waitMs('someone-else', '10.0.0.7'), 1000);
  t.equal(throttle.waitMs('someone-else', '10.0.0.8'), 0);
});
