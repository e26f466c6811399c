// Shapes of the documents actors keep in memory and persist: one zod schema each, because a store is an
// outside input too (a snapshot written by an older version or edited by hand is checked on load).
import { z } from 'zod';
import { PERMISSIONS } from '../../src/auth/acl.js';

const names = z.array(z.string());
export const aceSchema = z.object({ users: names, clients: names, groups: names });
export const aclSchema = z.object(
  Object.fromEntries(PERMISSIONS.map((p) => [p, aceSchema])) as Record<(typeof PERMISSIONS)[number], typeof aceSchema>,
);

/** A public key of a user or client; `expiration_date` is `infinity` or `YYYY-MM-DDTHH:MM:SSZ`. */
export const keyDocSchema = z.object({ public_key: z.string(), expiration_date: z.string() });
export type KeyDoc = z.infer<typeof keyDocSchema>;
const keys = z.record(z.string(), keyDocSchema);

export const orgDocSchema = z.object({
  name: z.string(),
  full_name: z.string(),
  guid: z.string(),
  acl: aclSchema,
  created_at: z.number(),
});
export type OrgDoc = z.infer<typeof orgDocSchema>;

export const clientDocSchema = z.object({ name: z.string(), validator: z.boolean(), keys, acl: aclSchema });
export type ClientDoc = z.infer<typeof clientDocSchema>;

export const groupDocSchema = z.object({
  name: z.string(),
  users: names,
  clients: names,
  groups: names,
  acl: aclSchema,
});
export type GroupDoc = z.infer<typeof groupDocSchema>;

export const containerDocSchema = z.object({ name: z.string(), acl: aclSchema });
export type ContainerDoc = z.infer<typeof containerDocSchema>;

/** A user's association with the organization. */
export const memberDocSchema = z.object({ username: z.string(), since: z.number() });
export type MemberDoc = z.infer<typeof memberDocSchema>;

export const userDocSchema = z.object({
  username: z.string(),
  email: z.string(),
  display_name: z.string(),
  first_name: z.string().optional(),
  middle_name: z.string().optional(),
  last_name: z.string().optional(),
  /** scrypt: `salt:hash`, both hex. */
  password_hash: z.string().optional(),
  superuser: z.boolean(),
  keys,
  acl: aclSchema,
});
export type UserDoc = z.infer<typeof userDocSchema>;

/** The global server-admins group: user names only (spec 2.2). */
export const serverAdminsDocSchema = z.object({ users: names });
export type ServerAdminsDoc = z.infer<typeof serverAdminsDocSchema>;

/**
 * A JSON document of the organization (node, role, environment, data bag, data bag item): `body` is the
 * object as the API shows it; `acl` is absent for data bag items, which share their bag's ACL.
 */
export const objectDocSchema = z.object({
  name: z.string(),
  body: z.record(z.string(), z.unknown()),
  acl: aclSchema.optional(),
});
export type ObjectDoc = z.infer<typeof objectDocSchema>;

/** A stored document checked against its schema; a bad one stops the restore naming its collection and id. */
export function parseDoc<T>(schema: z.ZodType<T>, raw: unknown, collection: string, id: string): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `store document ${collection}/${id} is invalid at '${issue?.path.join('.') ?? ''}': ${issue?.message ?? 'unknown'}`,
    );
  }
  return parsed.data;
}
