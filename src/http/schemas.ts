// Every HTTP request body, one zod schema each (reference 3, 4). Names follow the wire: a schema and its
// inferred type share a stem.
import { z } from 'zod';
import { parseTimestamp } from '../auth/signed-headers.js';

export const ORG_NAME = /^[a-z0-9][a-z0-9_-]{0,254}$/;
const ORG_FULL_NAME = /^\S.{0,1022}$/s;
const USER_NAME = /^[a-z0-9_-]+$/;
const PERSON_NAME = /^[\p{L}\p{N}_!'. -]*$/u;
const CLIENT_NAME = /^[.\p{L}\p{N}_-]+$/u;
const GROUP_NAME = /^[a-z0-9_-]+$/;
const KEY_NAME = /^[.\p{L}\p{N}_:-]+$/u;
const CONTAINER_NAME = /^[.\p{L}\p{N}_-]+$/u;
// The original's text says no Z, yet its check requires one (reference 2); this says what is checked.
const EXPIRATION_MESSAGE =
  'Field expiration_date is invalid. All dates must be a valid date in ISO8601 form of exactly YYYY-MM-DDThh:mm:ssZ, eg 2099-02-28T01:00:00Z, or the string "infinity".';

const custom = (ctx: z.RefinementCtx, message: string) => ctx.addIssue({ code: 'custom', message });

export const orgCreateSchema = z.object({
  name: z.string().regex(ORG_NAME),
  full_name: z.string().regex(ORG_FULL_NAME),
});
export type OrgCreate = z.infer<typeof orgCreateSchema>;
export const orgUpdateSchema = orgCreateSchema;

/** Key fields a user or client body may not carry since API v1 (reference 4.1). */
const keyFields = {
  public_key: z.string().optional(),
  create_key: z.boolean().optional(),
  private_key: z.unknown().optional(),
};

const userFields = {
  username: z.string().regex(USER_NAME).optional(),
  name: z.string().regex(USER_NAME).optional(),
  email: z.string().regex(/^[^\s@]+@[^\s@]+$/),
  display_name: z.string().min(1),
  first_name: z.string().regex(PERSON_NAME).optional(),
  middle_name: z.string().regex(PERSON_NAME).optional(),
  last_name: z.string().regex(PERSON_NAME).optional(),
  password: z.string().min(6),
  ...keyFields,
};

export const userCreateSchema = z.object(userFields).superRefine((u, ctx) => {
  if (u.username === undefined && u.name === undefined) custom(ctx, "Field 'username' missing");
  if (u.private_key === true) custom(ctx, 'Please use create_key: true instead of private_key: true');
  if (u.create_key === true && u.public_key !== undefined)
    custom(ctx, 'You must specify either create_key or public_key, but not both');
});
export type UserCreate = z.infer<typeof userCreateSchema>;

export const userUpdateSchema = z.object({
  ...userFields,
  email: userFields.email.optional(),
  display_name: userFields.display_name.optional(),
  password: userFields.password.optional(),
});
export type UserUpdate = z.infer<typeof userUpdateSchema>;

export const clientCreateSchema = z
  .object({
    name: z.string().optional(),
    clientname: z.string().optional(),
    validator: z.boolean().optional(),
    ...keyFields,
  })
  .superRefine((b, ctx) => {
    const name = b.name ?? b.clientname;
    if (name === undefined) return custom(ctx, "Field 'name' missing");
    if (b.name !== undefined && b.clientname !== undefined && b.name !== b.clientname)
      return custom(ctx, 'name and clientname must match');
    if (!CLIENT_NAME.test(name))
      return custom(ctx, `Invalid client name '${name}' using regex: '${CLIENT_NAME.source}'`);
    if (b.create_key === true && b.public_key !== undefined)
      custom(ctx, 'You must specify either create_key or public_key, but not both');
  });
export type ClientCreate = z.infer<typeof clientCreateSchema>;

export const clientUpdateSchema = z.object({
  name: z.string().regex(CLIENT_NAME).optional(),
  clientname: z.string().regex(CLIENT_NAME).optional(),
  validator: z.boolean().optional(),
  ...keyFields,
  json_class: z.string().optional(),
  chef_type: z.string().optional(),
  orgname: z.string().optional(),
});
export type ClientUpdate = z.infer<typeof clientUpdateSchema>;

export const keyCreateSchema = z
  .object({
    name: z.string().regex(KEY_NAME),
    // A refinement, so the message reaches the client; the date must also exist (no month 13).
    expiration_date: z.string().refine((v) => v === 'infinity' || parseTimestamp(v) !== null, EXPIRATION_MESSAGE),
    public_key: z.string().optional(),
    create_key: z.boolean().optional(),
  })
  .superRefine((k, ctx) => {
    if (k.create_key === true && k.public_key !== undefined)
      custom(ctx, 'You must specify either create_key or public_key, but not both');
    if (k.create_key !== true && k.public_key === undefined)
      custom(ctx, 'You must specify either create_key or public_key');
  });
export type KeyCreate = z.infer<typeof keyCreateSchema>;

export const keyUpdateSchema = z
  .object({
    name: z.string().regex(KEY_NAME).optional(),
    expiration_date: keyCreateSchema.shape.expiration_date.optional(),
    public_key: z.string().optional(),
    create_key: z.boolean().optional(),
  })
  .superRefine((k, ctx) => {
    if (
      k.name === undefined &&
      k.expiration_date === undefined &&
      k.public_key === undefined &&
      k.create_key === undefined
    ) {
      custom(ctx, "At least one of 'name', 'expiration_date', or 'public_key' must be specified");
    }
    if (k.create_key === true && k.public_key !== undefined)
      custom(ctx, 'You must specify either create_key or public_key, but not both');
  });
export type KeyUpdate = z.infer<typeof keyUpdateSchema>;

export const groupCreateSchema = z
  .object({ id: z.string().optional(), groupname: z.string().optional() })
  .superRefine((g, ctx) => {
    const name = g.id ?? g.groupname;
    if (name === undefined || !GROUP_NAME.test(name)) custom(ctx, 'Invalid group name.');
  });
export type GroupCreate = z.infer<typeof groupCreateSchema>;

const memberList = z.array(z.string()).optional();
export const groupUpdateSchema = z.object({
  groupname: z.string().regex(GROUP_NAME).optional(),
  name: z.string().optional(),
  orgname: z.string().optional(),
  actors: z.object({ users: memberList, clients: memberList, groups: memberList }).optional(),
});
export type GroupUpdate = z.infer<typeof groupUpdateSchema>;

export const containerCreateSchema = z.object({
  containername: z.string().regex(CONTAINER_NAME),
  containerpath: z.string().optional(),
});

export const memberAddSchema = z
  .object({ username: z.string().regex(USER_NAME).optional(), user: z.string().regex(USER_NAME).optional() })
  .superRefine((m, ctx) => {
    if (m.username === undefined && m.user === undefined) custom(ctx, "Field 'username' missing");
  });

export const serverAdminAddSchema = z.object({ username: z.string().regex(USER_NAME) });
