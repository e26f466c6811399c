// The host of a ZeroMQ endpoint a server names, and whether this machine can resolve it.
import t from 'tap';
import { endpointHost, unresolvedEndpoints } from '../../src/protocol/endpoint-host.js';

t.test('the host of a tcp endpoint', async (t) => {
  t.equal(endpointHost('tcp://push.example.com:10000'), 'push.example.com');
  t.equal(endpointHost('tcp://10.0.0.5:10002'), '10.0.0.5');
  t.equal(endpointHost('tcp://[::1]:10000'), '::1');
  t.equal(endpointHost('tcp://push.example.com'), null, 'no port');
  t.equal(endpointHost('ipc:///tmp/push'), null, 'not tcp');
  t.equal(endpointHost('tcp://a:b:10000'), null);
});

t.test('only names that do not resolve are reported, each once', async (t) => {
  const nowhere = 'tcp://push.no-such-host.invalid:10000'; // RFC 6761: .invalid never resolves
  t.same(
    await unresolvedEndpoints([
      'tcp://127.0.0.1:10000',
      'tcp://[::1]:10001',
      'tcp://localhost:10002',
      nowhere,
      nowhere,
      'ipc:///tmp/push',
    ]),
    [nowhere],
  );
});
