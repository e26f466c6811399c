// A job's file: decoded from the commit, written 0600 under file_dir, removed afterwards.
import { mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { decodeJobFile, removeJobFile, writeJobFile } from '../../src/client/job-file.js';

t.test('raw: is taken as is, base64: is decoded, anything else is refused', async (t) => {
  t.strictSame(decodeJobFile('raw:#!/bin/sh\necho hi\n'), { ok: true, data: Buffer.from('#!/bin/sh\necho hi\n') });
  t.strictSame(decodeJobFile('raw:'), { ok: true, data: Buffer.alloc(0) });
  t.strictSame(decodeJobFile(`base64:${Buffer.from([0, 255, 1]).toString('base64')}`), {
    ok: true,
    data: Buffer.from([0, 255, 1]),
  });
  t.strictSame(
    decodeJobFile('base64:aGVs\nbG8='),
    { ok: true, data: Buffer.from('hello') },
    'line breaks inside base64 are fine',
  );
  t.strictSame(decodeJobFile('base64:not base64!'), { ok: false, detail: 'the base64: content is not valid base64' });
  t.strictSame(
    decodeJobFile('base64:abc'),
    { ok: false, detail: 'the base64: content is not valid base64' },
    'a truncated quantum is refused',
  );
  t.strictSame(decodeJobFile('text:hello'), { ok: false, detail: 'the file must start with raw: or base64:' });
});

t.test('the file is written with mode 0600 under file_dir, which is made when missing', async (t) => {
  const dir = join(t.testdir({}), 'files', 'nested');
  const path = await writeJobFile(dir, 'job/../1', Buffer.from('content'));
  t.equal(join(path, '..'), dir, 'the job id cannot leave file_dir');
  t.match(path, /\/push-job-job____1-[0-9a-f]{8}$/);
  t.equal(readFileSync(path, 'utf8'), 'content');
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.equal(statSync(dir).mode & 0o777, 0o711);
  const second = await writeJobFile(dir, 'job/../1', Buffer.from('other'));
  t.not(second, path, 'two files of one job do not collide');
  await removeJobFile(path);
  t.throws(() => statSync(path), { code: 'ENOENT' });
  await removeJobFile(path);
  t.pass('removing a missing file is fine');
});

t.test('a file_dir that is a symbolic link is refused', async (t) => {
  const root = t.testdir({});
  mkdirSync(join(root, 'elsewhere'));
  symlinkSync(join(root, 'elsewhere'), join(root, 'files'));
  await t.rejects(writeJobFile(join(root, 'files'), 'j1', Buffer.from('x')), /is not a directory/);
});
