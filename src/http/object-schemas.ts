// Bodies of the organization's JSON documents and of ACL changes (reference 5.1). A document comes back
// normalized: defaults filled in, so every stored node has the same shape.
import { z } from 'zod';
import type { PERMISSIONS } from '../auth/acl.js';

const OBJECT_NAME = /^[A-Za-z0-9_.:-]+$/;
const attrs = z.record(z.string(), z.unknown()).default({});
/** `recipe[x]`, `role[y]`, or a bare recipe name, which the server writes as `recipe[x]`. */
const runListItem = z
  .string()
  .regex(/^(recipe\[[^\]\s]+\]|role\[[^\]\s]+\]|[A-Za-z0-9_.:@-]+)$/)
  .transform((item) => (item.startsWith('recipe[') || item.startsWith('role[') ? item : `recipe[${item}]`));
const runList = z.array(runListItem).default([]);

export const nodeSchema = z.strictObject({
  name: z.string().regex(OBJECT_NAME),
  chef_environment: z.string().regex(OBJECT_NAME).default('_default'),
  json_class: z.literal('Chef::Node').default('Chef::Node'),
  chef_type: z.literal('node').default('node'),
  run_list: runList,
  normal: attrs,
  default: attrs,
  override: attrs,
  automatic: attrs,
  policy_name: z.string().nullable().optional(),
  policy_group: z.string().nullable().optional(),
});

export const roleSchema = z.strictObject({
  name: z.string().regex(OBJECT_NAME),
  description: z.string().default(''),
  json_class: z.literal('Chef::Role').default('Chef::Role'),
  chef_type: z.literal('role').default('role'),
  default_attributes: attrs,
  override_attributes: attrs,
  run_list: runList,
  env_run_lists: z.record(z.string(), runList).default({}),
});

export const environmentSchema = z.strictObject({
  name: z.string().regex(OBJECT_NAME),
  description: z.string().default(''),
  json_class: z.literal('Chef::Environment').default('Chef::Environment'),
  chef_type: z.literal('environment').default('environment'),
  cookbook_versions: z.record(z.string(), z.string()).default({}),
  default_attributes: attrs,
  override_attributes: attrs,
});

export const dataBagSchema = z.object({ name: z.string().regex(/^[A-Za-z0-9_.-]+$/) });

/** A data bag item is free JSON with an `id`. */
export const dataBagItemSchema = z.looseObject({ id: z.string().regex(/^[A-Za-z0-9_.-]+$/) });

const names = z.array(z.string());
const aceSchema = z
  .object({ actors: names, groups: names, users: names.optional(), clients: names.optional() })
  .superRefine((a, ctx) => {
    if ((a.users === undefined) !== (a.clients === undefined)) {
      const given = a.users !== undefined ? 'users' : 'clients';
      const other = given === 'users' ? 'clients' : 'users';
      ctx.addIssue({
        code: 'custom',
        message: `You provided '${given}' with your request. Including this field also requires that you provide '${other}'`,
      });
    } else if (a.users !== undefined && a.actors.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: "When providing 'users' and 'clients' fields, the 'actors' field must have a value of [].",
      });
    }
  });

/** `{"read": {"actors": [...], "groups": [...]}}`: the body names the permission it replaces. */
export function acePutSchema(perm: (typeof PERMISSIONS)[number]) {
  return z.object({ [perm]: aceSchema });
}
