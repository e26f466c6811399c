// Who may sign requests: users with their keys, each organization's clients with theirs, and who is a member
// of which organization. The actors that own these (the users actor, each organization) update it as they apply
// writes the store already holds, so authentication reads it without asking them: a request costs one ask, the
// one that answers it. Key changes, deletions and renames reach it in the same turn as the actor's own state.
import type { KeyObject } from 'node:crypto';
import { parsePublicKey } from '../../src/auth/rsa-keys.js';
import type { ClientDoc, KeyDoc, UserDoc } from './documents.js';
import { expiresAt } from './key-ops.js';

/**
 * A key a principal may sign with, its expiry read once from its document. The parsed key is not kept here but in
 * the bounded cache of parsePublicKey: a KeyObject is about 2 KB, and a fleet has a key per node.
 */
export class SigningKey {
  private readonly expiresMs: number;
  readonly pem: string;

  constructor(
    /** The key's name (`default`, or one added through the keys API). */
    readonly name: string,
    doc: KeyDoc,
  ) {
    this.expiresMs = expiresAt(doc);
    this.pem = doc.public_key;
  }

  usableAt(nowMs: number): boolean {
    return !(this.expiresMs <= nowMs);
  }

  /** The public key, or null when the PEM holds no RSA public key. */
  get publicKey(): KeyObject | null {
    return parsePublicKey(this.pem);
  }
}

const signingKeysOf = (keys: Record<string, KeyDoc>): readonly SigningKey[] =>
  Object.entries(keys).map(([name, doc]) => new SigningKey(name, doc));

export interface UserPrincipal {
  keys: readonly SigningKey[];
  superuser: boolean;
  serverAdmin: boolean;
  /** For the web dashboard's sign-in (src/auth/passwords.ts); undefined when the account has no password. */
  passwordHash: string | undefined;
}

export interface ClientPrincipal {
  keys: readonly SigningKey[];
  validator: boolean;
}

interface OrgPrincipals {
  clients: Map<string, ClientPrincipal>;
  members: Set<string>;
}

/** What authentication reads. */
export interface PrincipalView {
  user(name: string): UserPrincipal | undefined;
  /** Undefined when the organization does not exist (or is being deleted). */
  org(org: string): { client(name: string): ClientPrincipal | undefined; isMember(user: string): boolean } | undefined;
}

export class PrincipalDirectory implements PrincipalView {
  private readonly users = new Map<string, UserPrincipal>();
  private serverAdmins = new Set<string>();
  private readonly orgs = new Map<string, OrgPrincipals>();

  user(name: string): UserPrincipal | undefined {
    return this.users.get(name);
  }

  org(org: string) {
    const o = this.orgs.get(org);
    if (!o) return undefined;
    return { client: (name: string) => o.clients.get(name), isMember: (user: string) => o.members.has(user) };
  }

  setUser(name: string, doc: UserDoc | null): void {
    if (doc === null) this.users.delete(name);
    else
      this.users.set(name, {
        keys: signingKeysOf(doc.keys),
        superuser: doc.superuser,
        serverAdmin: this.serverAdmins.has(name),
        passwordHash: doc.password_hash,
      });
  }

  setServerAdmins(names: ReadonlySet<string>): void {
    this.serverAdmins = new Set(names);
    for (const [name, u] of this.users) u.serverAdmin = this.serverAdmins.has(name);
  }

  addOrg(org: string): void {
    if (!this.orgs.has(org)) this.orgs.set(org, { clients: new Map(), members: new Set() });
  }

  dropOrg(org: string): void {
    this.orgs.delete(org);
  }

  setClient(org: string, name: string, doc: ClientDoc | null): void {
    const o = this.orgs.get(org);
    if (!o) return;
    if (doc === null) o.clients.delete(name);
    else o.clients.set(name, { keys: signingKeysOf(doc.keys), validator: doc.validator });
  }

  /**
   * A renamed account keeps its memberships. The users actor moves them here before it answers the rename; each
   * organization then applies the same move to its own documents.
   */
  renameMember(from: string, to: string): void {
    for (const o of this.orgs.values()) {
      if (o.members.delete(from)) o.members.add(to);
    }
  }

  setMember(org: string, user: string, member: boolean): void {
    const o = this.orgs.get(org);
    if (!o) return;
    if (member) o.members.add(user);
    else o.members.delete(user);
  }
}
