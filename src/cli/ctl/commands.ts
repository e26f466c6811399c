// infra-server-ctl's commands (spec 4.6) as a table for the command framework: their names, arguments, options
// and help text, the option naming the server's settings file, and what each command runs as pivotal.
import type { ServerConfigSource } from '../../config/server-config.js';
import { at, type Command, flag, str, type Tool } from '../framework.js';
import type { Ctl } from './connection.js';
import { orgUserAdd, orgUserRemove } from './org-users.js';
import { orgCreate, orgDelete, orgList, orgShow } from './orgs.js';
import { grantServerAdmin, listServerAdmins, removeServerAdmin } from './server-admins.js';
import { userCreate, userDelete, userList, userShow } from './users.js';

const yes = { type: 'boolean', short: 'y', help: 'do not ask for confirmation' } as const;

const COMMANDS: Record<string, Command<Ctl>> = {
  'org-create': {
    args: 'ORG_NAME "ORG_FULL_NAME"',
    summary: 'create an organization and print its validator key',
    options: {
      association_user: {
        type: 'string',
        short: 'a',
        arg: 'USER',
        help: 'associate USER and add it to admins and billing_admins',
      },
      filename: { type: 'string', short: 'f', arg: 'FILE', help: 'write the validator key to FILE instead of stdout' },
    },
    positionals: [2, 2],
    countMessage: 'You must specify an ORG_NAME and an ORG_FULL_NAME',
    plan: (a, v) => (ctl) =>
      orgCreate(ctl, {
        name: at(a, 0),
        fullName: at(a, 1),
        associateUser: str(v, 'association_user'),
        file: str(v, 'filename'),
      }),
  },
  'org-delete': {
    args: 'ORG_NAME',
    summary: 'delete an organization',
    options: { yes },
    positionals: [1, 1],
    plan: (a, v) => (ctl) => orgDelete(ctl, { name: at(a, 0), yes: flag(v, 'yes') }),
  },
  'org-list': {
    args: '',
    summary: 'list the organizations',
    options: {
      'all-orgs': { type: 'boolean', short: 'a', help: 'also show pre-created organizations (20 letters)' },
      'with-uri': { type: 'boolean', short: 'w', help: 'show each URI' },
    },
    positionals: [0, 0],
    plan: (_a, v) => (ctl) => orgList(ctl, { all: flag(v, 'all-orgs'), withUri: flag(v, 'with-uri') }),
  },
  'org-show': {
    args: 'ORG_NAME',
    summary: 'show an organization',
    options: {},
    positionals: [1, 1],
    plan: (a) => (ctl) => orgShow(ctl, { name: at(a, 0) }),
  },
  'org-user-add': {
    args: 'ORG_NAME USER_NAME',
    summary: 'associate a user with an organization',
    options: { admin: { type: 'boolean', short: 'a', help: 'also add the user to admins and billing_admins' } },
    positionals: [2, 2],
    countMessage: 'You must specify an ORG_NAME and USER_NAME',
    plan: (a, v) => (ctl) => orgUserAdd(ctl, { org: at(a, 0), user: at(a, 1), admin: flag(v, 'admin') }),
  },
  'org-user-remove': {
    args: 'ORG_NAME USER_NAME',
    summary: 'remove a user from an organization',
    options: { force: { type: 'boolean', help: 'first remove the user from admins and billing_admins' } },
    positionals: [2, 2],
    countMessage: 'You must specify an ORG_NAME and USER_NAME',
    plan: (a, v) => (ctl) => orgUserRemove(ctl, { org: at(a, 0), user: at(a, 1), force: flag(v, 'force') }),
  },
  'user-create': {
    args: "USER_NAME FIRST_NAME [MIDDLE_NAME] LAST_NAME EMAIL 'PASSWORD'",
    summary: 'create a user and print its private key',
    options: {
      filename: { type: 'string', short: 'f', arg: 'FILE', help: 'write the private key to FILE instead of stdout' },
      orgname: { type: 'string', short: 'o', arg: 'ORG', help: 'associate the user with ORG' },
    },
    positionals: [5, 6],
    plan: (a, v) => (ctl) => {
      const middle = a.length === 6;
      return userCreate(ctl, {
        username: at(a, 0),
        firstName: at(a, 1),
        lastName: at(a, middle ? 3 : 2),
        email: at(a, middle ? 4 : 3),
        password: at(a, middle ? 5 : 4),
        middleName: middle ? at(a, 2) : undefined,
        file: str(v, 'filename'),
        org: str(v, 'orgname'),
      });
    },
  },
  'user-list': {
    args: '',
    summary: 'list every user, superusers included',
    options: {
      'with-uri': { type: 'boolean', short: 'w', help: 'show each URI' },
      'all-info': { type: 'boolean', short: 'a', help: 'show names and email addresses' },
    },
    positionals: [0, 0],
    plan: (_a, v) => (ctl) => userList(ctl, { withUri: flag(v, 'with-uri'), allInfo: flag(v, 'all-info') }),
  },
  'user-show': {
    args: 'USER_NAME',
    summary: 'show a user',
    options: { 'with-orgs': { type: 'boolean', short: 'l', help: "also list the user's organizations" } },
    positionals: [1, 1],
    plan: (a, v) => (ctl) => userShow(ctl, { name: at(a, 0), withOrgs: flag(v, 'with-orgs') }),
  },
  'user-delete': {
    args: 'USER_NAME',
    summary: 'delete a user and its associations',
    options: { yes },
    positionals: [1, 1],
    plan: (a, v) => (ctl) => userDelete(ctl, { name: at(a, 0), yes: flag(v, 'yes') }),
  },
  'grant-server-admin-permissions': {
    args: 'USER_NAME',
    summary: 'add a user to server-admins',
    options: {},
    positionals: [1, 1],
    countMessage: 'Username is the only argument to grant-server-admin-permissions.\nPlease pass a single argument.',
    plan: (a) => (ctl) => grantServerAdmin(ctl, { user: at(a, 0) }),
  },
  'remove-server-admin-permissions': {
    args: 'USER_NAME',
    summary: 'remove a user from server-admins',
    options: {},
    positionals: [1, 1],
    countMessage: 'Username is the only argument to remove-server-admin-permissions.\nPlease pass a single argument.',
    plan: (a) => (ctl) => removeServerAdmin(ctl, { user: at(a, 0) }),
  },
  'list-server-admins': {
    args: '',
    summary: 'list the members of server-admins',
    options: {},
    positionals: [0, 0],
    countMessage: 'This command does not accept arguments.',
    plan: () => (ctl) => listServerAdmins(ctl),
  },
};

export const CTL: Tool<Ctl, ServerConfigSource> = {
  name: 'infra-server-ctl',
  heading: "Commands (each signs its requests as the superuser pivotal, whose key is in the server's data_dir):",
  commands: COMMANDS,
  common: {
    config: {
      type: 'string',
      short: 'c',
      arg: 'FILE',
      help: 'the server settings file (default: ./push-jobs-server.rb when present)',
    },
  },
  label: (name) => name,
  connection: (values) => {
    const file = str(values, 'config');
    return file === undefined ? {} : { file };
  },
};
