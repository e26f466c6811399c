// What the push actors ask of the cluster: on one process there is no other gateway and every gateway speaks for
// its node; the slot answers so until a member plugs its routes in, and hands every question on to them after.
import t from 'tap';
import { PushClusterSlot, SOLE_PROCESS, type OwnersRecord, type PushCluster } from '../../src/cluster/push-cluster.js';

const RECORD: OwnersRecord = { status: 'up', updated_at: 1234, incarnation: 'inc-1' };

/** A cluster recording each call with its arguments, answering with fixed values. */
function recordingCluster() {
  const calls: Array<[string, ...unknown[]]> = [];
  const cluster: PushCluster = {
    gatewayOf: (...args) => (calls.push(['gatewayOf', ...args]), 'member-b'),
    heardAt: (...args) => (calls.push(['heardAt', ...args]), false),
    jobOver: (...args) => void calls.push(['jobOver', ...args]),
    nodeState: (...args) => void calls.push(['nodeState', ...args]),
    rollCall: (...args) => void calls.push(['rollCall', ...args]),
  };
  return { cluster, calls };
}

t.test('one process: no node has another gateway, and any gateway speaks for its node', async (t) => {
  t.equal(SOLE_PROCESS.gatewayOf('o', 'n1'), undefined);
  t.equal(SOLE_PROCESS.heardAt('o', 'n1', 'anyone'), true);
  t.equal(SOLE_PROCESS.jobOver('o', 'j1'), undefined);
  t.equal(SOLE_PROCESS.nodeState('o', 'n1', 'g', RECORD), undefined);
  t.equal(SOLE_PROCESS.rollCall('o'), undefined);
});

t.test('the slot answers as one process until a cluster is plugged in', async (t) => {
  const slot = new PushClusterSlot();
  t.equal(slot.gatewayOf('o', 'n1'), undefined);
  t.equal(slot.heardAt('o', 'n1', 'member-a'), true);
  slot.jobOver('o', 'j1', 'member-a');
  slot.nodeState('o', 'n1', 'member-a', RECORD);
  slot.rollCall('o');
  const { cluster, calls } = recordingCluster();
  slot.plug(cluster);
  t.same(calls, [], 'nothing asked before the plug reaches the cluster plugged later');
});

t.test('once plugged, the slot hands every call on with its arguments, and returns its answers', async (t) => {
  const slot = new PushClusterSlot();
  const { cluster, calls } = recordingCluster();
  slot.plug(cluster);
  t.equal(slot.gatewayOf('o', 'n1'), 'member-b', "the cluster's gateway");
  t.equal(slot.heardAt('o', 'n1', 'member-a'), false, "the cluster's answer, not one process's");
  slot.jobOver('o', 'j1', 'member-a');
  slot.jobOver('o', 'j2');
  slot.nodeState('o', 'n1', 'member-c', RECORD);
  slot.rollCall('org-2');
  t.same(calls, [
    ['gatewayOf', 'o', 'n1'],
    ['heardAt', 'o', 'n1', 'member-a'],
    ['jobOver', 'o', 'j1', 'member-a'],
    ['jobOver', 'o', 'j2', undefined],
    ['nodeState', 'o', 'n1', 'member-c', RECORD],
    ['rollCall', 'org-2'],
  ]);
});

t.test('a later plug replaces the earlier cluster', async (t) => {
  const slot = new PushClusterSlot();
  const first = recordingCluster();
  const second = recordingCluster();
  slot.plug(first.cluster);
  slot.plug(second.cluster);
  slot.rollCall('o');
  t.same(first.calls, []);
  t.same(second.calls, [['rollCall', 'o']]);
});
