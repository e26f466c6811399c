// Where test support registers what must be stopped or removed at the end: a tap Test, or a benchmark's own list
// (bench/support.ts `scope`). Only `teardown` is asked for, so a benchmark needs no tap.

export interface TeardownScope {
  teardown(fn: () => unknown): void;
}
