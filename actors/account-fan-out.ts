// What the users actor tells the organizations this process serves when an account changes: a deleted account's
// organizations drop its association, and every organization moves a renamed account's mentions to its new name.
import { dispatch, type Ref } from 'nact';
import type { Logger } from '../src/lib/logger.js';
import { ask } from './ask.js';
import type { OrgRegistry } from './org-registry.js';
import type { Reply, RequestContext } from './shared/reply.js';
import type { UsersPorts } from './users/users-ports.js';

/** The server acting on its own behalf. */
const SERVER_CONTEXT: RequestContext = {
  requestor: { kind: 'user', name: 'pivotal', superuser: true, serverAdmin: true, validator: false },
  baseUrl: '',
  apiVersion: 1,
  authKey: '',
  authPublicKey: '',
};

/** `registry`: the organizations served here, made after the users actor that these ports are for. */
export function accountFanOut(
  registry: () => OrgRegistry,
  log: Logger,
): Pick<UsersPorts, 'userDeleted' | 'userRenamed'> {
  return {
    userDeleted: (org, username) => {
      const handle = registry().get(org);
      if (handle) dispatch(handle.ref, { type: 'user_deleted', username });
    },
    // Every organization, members or not: ACL entries may name a user that has left.
    userRenamed: (from, to) => {
      for (const [name, { ref }] of registry().entries()) {
        const failed = (why: unknown) =>
          log.error('an organization could not rename a user', { org: name, from, to, error: why });
        void ask(ref, (replyTo: Ref<Reply>) => ({
          type: 'request' as const,
          ctx: SERVER_CONTEXT,
          op: { type: 'rename_member' as const, from, to },
          replyTo,
        })).then(
          (reply) => {
            if (reply.status >= 300) failed(JSON.stringify(reply.body));
          },
          (e: unknown) => failed(e),
        );
      }
    },
  };
}
