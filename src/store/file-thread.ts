// A worker thread the file store hands file operations to. Through Node's own file API every small operation is a
// round trip to the four shared file threads and back to the event loop: a document write was four of them, and a
// checkpoint syncing a few thousand files a second while a fleet registers cost the main thread about a sixth of its
// time and kept the write log's own sync waiting behind it. Made synchronously on the main thread instead, the
// writes stalled it whenever a sync elsewhere held the file system's journal. A thread of the store's own makes
// them one after another, in the order posted, blocking only itself: the store keeps one for writes and one for
// syncs, so that writes never wait behind a checkpoint, each shared by every store of the process.
import type { Worker } from 'node:worker_threads';
import { besideModule, startModuleWorker } from '../lib/sibling-module.js';
import type { FileOp, FileThreadReply, FileThreadRequest } from './file-ops.js';

export class FileThread {
  #worker: Worker | undefined;
  #next = 0;
  readonly #waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  /** Makes the operations in order, after every operation posted before; rejects with the first failure. */
  run(ops: FileOp[]): Promise<void> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      const worker = this.#thread();
      worker.ref(); // the process waits for operations in flight, and only for them
      const request: FileThreadRequest = { id, ops };
      worker.postMessage(request);
    });
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = startModuleWorker(besideModule(import.meta.url, 'file-thread-worker'));
    worker.on('message', (reply: FileThreadReply) => {
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (this.#waiting.size === 0) worker.unref();
      if (reply.error === null) waiting?.resolve();
      else waiting?.reject(new Error(reply.error));
    });
    const lost = (err: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const waiting of this.#waiting.values()) waiting.reject(err);
      this.#waiting.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the file thread stopped (exit code ${code})`)));
    this.#worker = worker;
    return worker;
  }
}
