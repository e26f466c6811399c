// Every op an organization answers, and the one table that routes each to its pure handler. The table must name
// every op: one missing, or given a handler for another op's shape, fails to compile.
import type { RequestContext } from '../shared/reply.js';
import { handleAclOp, type AclOp } from './ops/acls.js';
import { handleClientOp, type ClientOp } from './ops/clients.js';
import { handleGroupOp, type GroupOp } from './ops/groups.js';
import { handleObjectOp, type ObjectOp } from './ops/objects.js';
import { handleOrgObjectOp, type OrgObjectOp } from './ops/organization.js';
import { handlePushOp, type PushOp } from './ops/push.js';
import { handleSearchOp, type SearchOp } from './ops/search.js';
import type { OrgState } from './org-state.js';
import type { HandlerEnv, OrgOutcome } from './outcome.js';

export type OrgOp = ClientOp | GroupOp | OrgObjectOp | ObjectOp | AclOp | PushOp | SearchOp;

type Handler<O> = (state: OrgState, ctx: RequestContext, op: O, env: HandlerEnv) => OrgOutcome;
type HandlerTable = { [K in OrgOp['type']]: Handler<Extract<OrgOp, { type: K }>> };

const HANDLERS = {
  list_clients: handleClientOp,
  create_client: handleClientOp,
  get_client: handleClientOp,
  update_client: handleClientOp,
  delete_client: handleClientOp,
  list_client_keys: handleClientOp,
  get_client_key: handleClientOp,
  create_client_key: handleClientOp,
  update_client_key: handleClientOp,
  delete_client_key: handleClientOp,

  list_groups: handleGroupOp,
  create_group: handleGroupOp,
  get_group: handleGroupOp,
  update_group: handleGroupOp,
  delete_group: handleGroupOp,
  list_containers: handleGroupOp,
  create_container: handleGroupOp,
  get_container: handleGroupOp,
  delete_container: handleGroupOp,

  get_org: handleOrgObjectOp,
  update_org: handleOrgObjectOp,
  delete_org: handleOrgObjectOp,
  list_members: handleOrgObjectOp,
  add_member: handleOrgObjectOp,
  get_member: handleOrgObjectOp,
  remove_member: handleOrgObjectOp,
  check_key_read: handleOrgObjectOp,
  rename_member: handleOrgObjectOp,

  list_objects: handleObjectOp,
  create_object: handleObjectOp,
  get_object: handleObjectOp,
  update_object: handleObjectOp,
  delete_object: handleObjectOp,
  list_items: handleObjectOp,
  create_item: handleObjectOp,
  get_item: handleObjectOp,
  update_item: handleObjectOp,
  delete_item: handleObjectOp,

  get_acl: handleAclOp,
  put_acl: handleAclOp,

  list_jobs: handlePushOp,
  watch_jobs: handlePushOp,
  start_job: handlePushOp,
  get_job: handlePushOp,
  abort_job: handlePushOp,
  get_job_output: handlePushOp,
  list_node_states: handlePushOp,
  get_push_access: handlePushOp,
  get_node_state: handlePushOp,
  get_push_config: handlePushOp,
  create_schedule: handlePushOp,
  list_schedules: handlePushOp,
  schedule: handlePushOp,

  list_indexes: handleSearchOp,
  search: handleSearchOp,
} satisfies HandlerTable;

/** Decides one op. Pure: the state is read, never changed. */
export function decide(state: OrgState, ctx: RequestContext, op: OrgOp, env: HandlerEnv): OrgOutcome {
  // The table pairs each op type with a handler of that op's shape; TypeScript cannot follow the pairing
  // through an indexed access, so the lookup is widened once here.
  const handler = HANDLERS[op.type] as Handler<OrgOp>;
  return handler(state, ctx, op, env);
}
