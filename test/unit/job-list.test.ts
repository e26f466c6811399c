// The job list's order: newest first, whatever order headers arrive in, with deleted jobs skipped.
import t from 'tap';
import { JobList } from '../../actors/push/job-list.js';
import type { JobHeader } from '../../actors/push/job-store.js';

const header = (id: string, created_at: number): JobHeader => ({
  id,
  command: 'chef-client',
  options: {},
  run_timeout: 3600,
  voting_timeout: 60,
  quorum: 1,
  status: 'complete',
  created_at,
  updated_at: created_at,
  voting_deadline: null,
  run_deadline: null,
});

const ids = (list: JobList, offset: number, limit: number) => list.newestFirst(offset, limit).map((h) => h.id);

t.test('pages newest first; ties by id, out-of-order loads sorted, deletes skipped', async (t) => {
  const list = new JobList();
  for (const [id, at] of [
    ['c', 30],
    ['a', 10],
    ['e', 50],
    ['b', 30],
    ['d', 40],
  ] as const)
    list.set(id, header(id, at));
  t.same(ids(list, 0, 10), ['e', 'd', 'c', 'b', 'a']);
  t.same(ids(list, 1, 2), ['d', 'c']);
  list.delete('d');
  t.same(ids(list, 1, 2), ['c', 'b'], 'a deleted job neither shows nor takes a place');
  list.set('c', { ...header('c', 30), status: 'aborted' });
  t.same(ids(list, 0, 10), ['e', 'c', 'b', 'a'], 'an update keeps the place');
  list.set('f', header('f', 60));
  t.same(ids(list, 0, 1), ['f']);
  t.equal(list.size, 5);
});
