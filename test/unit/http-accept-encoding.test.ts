// Which Accept-Encoding headers take a gzipped answer (RFC 9110 12.5.3), as the clients in use send them.
import t from 'tap';
import { acceptsGzip } from '../../src/http/respond.js';

t.test('gzip is taken when named, or else covered by *, unless its weight is 0', async (t) => {
  const cases: Array<[string | undefined, boolean, string]> = [
    ['gzip;q=1.0,deflate;q=0.6,identity;q=0.3', true, "Chef's Ruby client"],
    ['gzip', true, "Go's transport"],
    ['gzip, deflate, br', true, 'a browser'],
    ['GZip', true, 'any case'],
    ['x-gzip', true, 'the old name'],
    ['deflate, gzip;q=0.5', true, 'gzip not first'],
    ['*', true, 'any coding'],
    ['*;q=0, gzip', true, 'named, whatever * says'],
    ['gzip;q=0, *', false, 'refused by name, whatever * says'],
    ['gzip;q=0', false, 'refused'],
    ['gzip; q=0.000, identity', false, 'refused, spaced'],
    ['deflate', false, 'another coding only'],
    ['identity', false, 'none'],
    ['', false, 'empty'],
    [undefined, false, 'no header'],
  ];
  for (const [header, taken, what] of cases) t.equal(acceptsGzip(header), taken, `${what}: ${String(header)}`);
});
