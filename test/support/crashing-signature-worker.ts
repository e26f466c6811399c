// A signature worker that dies on its first batch, for the pool's crash policy.
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', () => process.exit(3));
