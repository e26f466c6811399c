// How the users actor of one process catches up with the account and membership changes the others make on the
// same store: each hint names what changed, read again from the store and applied here, never written; and a
// reload, after each reconnection of the bus and every RELOAD_MS, makes up for the hints that were lost.
import { dispatch, type Ref } from 'nact';
import type { Logger } from '../../src/lib/logger.js';
import { realTimers, type Timers } from '../../src/lib/timers.js';
import { applyStored, fanOut } from './users-apply.js';
import type { UsersState } from './users-state.js';
import type { UsersPorts } from './users-ports.js';
import { loadAccounts, loadMembership, readAccounts, readMembership, readOrgInfo } from './users-store.js';
import {
  accountChanges,
  forgetOrg,
  hintFanOut,
  reconcile,
  setMembership,
  usersHintSchema,
  type HintBus,
  type UsersHint,
} from './users-sync.js';

/** What `followHints` hands the users actor: a hint checked at the boundary, or a reload. */
export type CatchUpMsg = { type: 'hint'; hint: UsersHint } | { type: 'reload' };

/**
 * How often every process reads accounts and memberships again, for a hint it missed. Seldom: hints are lost only
 * with the bus's connection, and a reconnection reloads at once; a reload costs a command per organization.
 */
export const RELOAD_MS = 300_000;

export class CatchUp {
  /** Memberships of accounts the last reload did not find (users-sync.ts, `reconcile`). */
  private suspects = new Set<string>();

  constructor(private readonly ports: UsersPorts) {}

  /** Reads again from the store what another process's hint names, and applies it. */
  async hint(state: UsersState, hint: UsersHint): Promise<void> {
    const { store } = this.ports;
    switch (hint.type) {
      case 'users': {
        const stored = await readAccounts(store, hint.names);
        applyStored(this.ports, state, accountChanges(state, stored));
        fanOut(this.ports, state, hintFanOut(state, hint));
        break;
      }
      case 'association':
        setMembership(state, hint.org, hint.username, await readMembership(store, hint.org, hint.username));
        break;
      case 'org_info':
      case 'org_deleted': {
        const info = await readOrgInfo(store, hint.org);
        if (info) state.orgInfo.set(hint.org, info);
        else forgetOrg(state, hint.org);
        break;
      }
    }
  }

  /**
   * Reads memberships again, and accounts unless this process writes them (holds the global lease) and has not just
   * taken them (`take`); nothing while the store is written back after a loss.
   */
  async reload(state: UsersState, take: boolean): Promise<void> {
    const { store, storeIsWhole, holdsAccounts } = this.ports;
    if (!take && storeIsWhole && !(await storeIsWhole())) return;
    const index = await loadMembership(store);
    if (!take && holdsAccounts?.() === true) {
      state.orgsOf = index.orgsOf;
      state.orgInfo = index.orgInfo;
      return;
    }
    const stored = await loadAccounts(store);
    const out = reconcile(state, stored, index, this.suspects);
    applyStored(this.ports, state, out.writes);
    state.orgsOf = out.index.orgsOf;
    state.orgInfo = out.index.orgInfo;
    this.suspects = out.suspects;
    for (const { org, username } of out.orphans) this.ports.userDeleted(org, username);
  }
}

/**
 * Hands the users actor every hint the bus brings (checked here, at the boundary), and a reload after each
 * reconnect and every RELOAD_MS on `timers`; resolves once listening. Returns the stop.
 */
export async function followHints(
  users: Ref<CatchUpMsg>,
  bus: HintBus,
  log: Logger,
  timers: Timers = realTimers,
): Promise<() => void> {
  await bus.listen({
    hint: (raw) => {
      const parsed = usersHintSchema.safeParse(raw);
      if (parsed.success) dispatch(users, { type: 'hint', hint: parsed.data });
      else log.debug('a hint that is none was dropped', { error: parsed.error });
    },
    reconnected: () => dispatch(users, { type: 'reload' }),
  });
  return timers.every(RELOAD_MS, () => dispatch(users, { type: 'reload' }), { unref: true });
}
