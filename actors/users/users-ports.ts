// What the users actor is given: its store, the organizations it tells of account changes, authentication's
// directory and, with several processes on one store, the bus and the lease that decide who writes the accounts.
// Apart from the actor, so that the parts it runs (users-apply.ts, users-catch-up.ts) can name them too.
import type { Logger } from '../../src/lib/logger.js';
import type { Store } from '../../src/store/store.js';
import type { PrincipalDirectory } from '../shared/principals.js';
import type { CrashReporter } from '../shared/supervision.js';
import type { HintBus } from './users-sync.js';

export interface UsersPorts {
  store: Store;
  now: () => number;
  /** Tells an organization served here that a user account is gone, so it drops the association. */
  userDeleted: (org: string, username: string) => void;
  /** Tells every organization served here that an account changed its name. */
  userRenamed: (from: string, to: string) => void;
  reporter: CrashReporter;
  /** Kept current with every account and server-admins change, for authentication. */
  principals: PrincipalDirectory;
  log: Logger;
  /** Where the other processes on the store hear of the changes made here; none with a single process. */
  bus?: HintBus;
  /** Whether this process holds the global lease, and so writes the accounts. */
  holdsAccounts?: () => boolean;
  /**
   * Whether the store holds everything written to it: false while it is written back after losing its data, when a
   * reload would forget accounts that are only in memory.
   */
  storeIsWhole?: () => Promise<boolean>;
}
