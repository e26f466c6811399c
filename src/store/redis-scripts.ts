// The Lua scripts the Redis store and the cluster leases run. Each touches the keys of one partition only (one hash
// tag, so one Redis Cluster slot), and every write checks its writer's lease in the same script as the write: an
// owner that lost its lease (paused, partitioned, replaced) writes nothing.
import type { Cluster, Redis } from 'ioredis';

/** A connection to a single Redis (or through Sentinel to its master), or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * What a fenced script answers when the lease is not (any more) the writer's: an error whose code is FENCED (Redis
 * prefixes ERR to a message of one word, so it has a second).
 */
export const FENCED_REPLY = 'FENCED lease not held by this writer';

// Ops after the token, each `code keyIndex count args...`: H (HSET pairs), D (HDEL fields), X (DEL), S (SADD),
// R (SREM). Arguments go to Redis in chunks: Lua's unpack has a stack limit of a few thousand values.
const FENCED_WRITE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('${FENCED_REPLY}') end
local commands = { H = 'HSET', D = 'HDEL', S = 'SADD', R = 'SREM' }
local i = 2
while i <= #ARGV do
  local code, key, n = ARGV[i], KEYS[tonumber(ARGV[i + 1])], tonumber(ARGV[i + 2])
  i = i + 3
  if code == 'X' then
    redis.call('DEL', key)
  else
    local width = code == 'H' and 2 or 1
    local total = n * width
    local done = 0
    while done < total do
      local take = math.min(total - done, 1000)
      redis.call(commands[code], key, unpack(ARGV, i + done, i + done + take - 1))
      done = done + take
    end
    i = i + total
  end
end
return 1
`;

// KEYS: the lease, the partition's registry. ARGV: token, the partition's key prefix, the collection. Removes the
// collection and every collection below it, their field maps and their names.
const FENCED_DROP = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('${FENCED_REPLY}') end
local prefix, root = ARGV[2], ARGV[3]
for _, name in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if name == root or string.sub(name, 1, #root + 1) == root .. '/' then
    local maps = prefix .. 'fm:' .. name
    for _, id in ipairs(redis.call('SMEMBERS', maps)) do redis.call('DEL', prefix .. 'f:' .. name .. ':' .. id) end
    redis.call('DEL', prefix .. 'c:' .. name, maps)
    redis.call('SREM', KEYS[2], name)
  end
end
return 1
`;

// KEYS: the collection's hash, the partition's registry. ARGV: id, the document, the collection. The stored
// document, whoever wrote it first: needs no lease, as every writer would write an equivalent one.
const CREATE_DOC = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then redis.call('SADD', KEYS[2], ARGV[3]) end
return redis.call('HGET', KEYS[1], ARGV[1])
`;

// KEYS: the lease, the epoch. ARGV: member id, the holder expected (empty: none). Takes the lease only when it is
// still what the caller read: free, or the token of a member the caller found gone. The new epoch is the old one
// plus one, or Redis's clock in microseconds when that is higher, so epochs keep rising even after Redis lost its
// counter. A lease has no time to live: it lasts as long as its member's registration (MEMBER_BEAT), which is what
// every member renews, so holding 65 partitions costs no more than holding one.
const TAKE = `
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[2] then return false end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local epoch = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, now)
redis.call('SET', KEYS[2], string.format('%d', epoch))
local token = string.format('%d', epoch) .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], token)
`;
const LEASE_TAKE = `${TAKE}
return token
`;

// KEYS: the lease, the epoch. ARGV: token. 1: still the token's (also when the lease was deleted but nobody took
// it since: the epoch is still the token's, so nobody else wrote, and the lease is set again). 0: another took it.
// -1: the epoch is gone, so Redis lost the partition's data. Asked only when a member's registration had lapsed,
// or when Redis refused a write, and on a slow timer.
const LEASE_CHECK = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then return 1 end
local epoch = redis.call('GET', KEYS[2])
if not epoch then return -1 end
if not holder and string.sub(ARGV[1], 1, #epoch + 1) == epoch .. ':' then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
`;

// KEYS: the lease, the epoch, the partition's member expiry set, when a member was last heard there. ARGV: member id,
// the holder expected (empty: none), ttl ms. LEASE_TAKE on a Redis Cluster, where the holder of a partition renews its
// registration in the partition's own slot (PARTITION_BEAT): the taker is registered there in the same script, so no
// other member finds the new holder unregistered and takes the lease from it.
const LEASE_TAKE_REGISTERED = `${TAKE}
local ms = math.floor(now / 1000)
redis.call('ZADD', KEYS[3], ms + tonumber(ARGV[3]), ARGV[1])
redis.call('SET', KEYS[4], ms)
return token
`;

// KEYS: the lease. ARGV: token. Lets the lease go only when it is still the token's.
const LEASE_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

// KEYS: the lease, a partition's inbox. ARGV: token, the consumer group, the entry ids. Acknowledges the entries only
// while the lease is still the token's: an owner that lost its partition leaves what it read for the next owner,
// who claims it (an entry is acknowledged only once its effects are stored under a valid lease).
const FENCED_ACK = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('${FENCED_REPLY}') end
return redis.call('XACK', KEYS[2], ARGV[2], unpack(ARGV, 3))
`;

// KEYS: a partition's inbox. ARGV: the consumer group. Trims the entries every reader is done with: those before
// the oldest entry read and not acknowledged, or when none waits, those up to the last one handed out. An entry
// not yet read, or read and not acknowledged, is never trimmed. Answers the entries left.
const INBOX_TRIM = `
local pending = redis.call('XPENDING', KEYS[1], ARGV[1])
local keep
if tonumber(pending[1]) > 0 then
  keep = pending[2]
else
  for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
    local fields = {}
    for i = 1, #group, 2 do fields[group[i]] = group[i + 1] end
    if fields['name'] == ARGV[1] then
      local ms, seq = string.match(fields['last-delivered-id'], '^(%d+)-(%d+)$')
      keep = ms .. '-' .. (tonumber(seq) + 1)
    end
  end
end
if keep then redis.call('XTRIM', KEYS[1], 'MINID', keep) end
return redis.call('XLEN', KEYS[1])
`;

// KEYS: the members' descriptions, their expiry set, when any member was last heard. ARGV: member id, description,
// ttl ms. Registers or refreshes the member, forgets the members whose registration ran out (by Redis's clock, so
// hosts' clocks do not matter), and answers whether this member's registration had lapsed ('1': it was gone, or ran
// out, before this beat), then the live members' descriptions.
//
// Members renew every third of the ttl, so Redis hearing none of them for half of it means Redis was away (failed
// over, paused, cut off), not each member: every registration then runs on by that silence, so that none is judged
// gone, nor its partitions and nodes moved, for Redis's absence. (The writes of a failover's last seconds went to the
// replaced master and were lost with it.) A member that died meanwhile is found out as late as the silence lasted.
const MEMBER_BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
local beating = ARGV[2] ~= ''
local heard = tonumber(redis.call('GET', KEYS[3]) or '0')
if beating and heard > 0 and now - heard > ttl / 2 then
  local silence = now - heard
  local all = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
  for i = 1, #all, 2 do redis.call('ZADD', KEYS[2], tonumber(all[i + 1]) + silence, all[i]) end
end
local mine = redis.call('ZSCORE', KEYS[2], ARGV[1])
local lapsed = (not mine or tonumber(mine) < now) and '1' or '0'
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
if #gone > 0 then
  redis.call('ZREM', KEYS[2], unpack(gone))
  redis.call('HDEL', KEYS[1], unpack(gone))
end
if beating then
  redis.call('ZADD', KEYS[2], now + ttl, ARGV[1])
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('SET', KEYS[3], now)
end
local answer = redis.call('HVALS', KEYS[1])
table.insert(answer, 1, lapsed)
return answer
`;

// KEYS: a partition's member expiry set, when a member was last heard there. ARGV: member id, ttl ms. On a Redis
// Cluster every member renews its registration in each partition's slot: MEMBER_BEAT's expiry, with no description
// and no list of members, counting a silence of Redis the same way (the slot hears every member, so a silent holder
// is judged by the others' beats). Answers 1 when the registration had lapsed.
const PARTITION_BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
local heard = tonumber(redis.call('GET', KEYS[2]) or '0')
if heard > 0 and now - heard > ttl / 2 then
  local silence = now - heard
  local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #all, 2 do redis.call('ZADD', KEYS[1], tonumber(all[i + 1]) + silence, all[i]) end
end
local mine = redis.call('ZSCORE', KEYS[1], ARGV[1])
local lapsed = (not mine or tonumber(mine) < now) and 1 or 0
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('SET', KEYS[2], now)
return lapsed
`;

// KEYS: the members' expiry set, when any member was last heard. ARGV: member id, ttl ms. 1 while the member's
// registration runs (by Redis's clock), counting a silence of Redis the way MEMBER_BEAT does: right after Redis came
// back, before any beat has run the registrations on by it, a holder is not judged gone for Redis's absence.
const MEMBER_ALIVE = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local heard = tonumber(redis.call('GET', KEYS[2]) or '0')
local silence = 0
if heard > 0 and now - heard > tonumber(ARGV[2]) / 2 then silence = now - heard end
return tonumber(score) + silence >= now and 1 or 0
`;

// KEYS: as MEMBER_BEAT. ARGV: member id. A member leaving on purpose is forgotten at once.
const MEMBER_LEAVE = `
redis.call('ZREM', KEYS[2], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
`;

/** The scripts as commands of a connection (ioredis sends EVALSHA, and the script itself once per server). */
export interface ScriptCommands {
  fencedWrite(keys: readonly string[], args: readonly (string | number)[]): Promise<number>;
  fencedDrop(lease: string, registry: string, token: string, prefix: string, collection: string): Promise<number>;
  createDoc(key: string, registry: string, id: string, doc: string, collection: string): Promise<string>;
  leaseTake(lease: string, epoch: string, member: string, expected: string): Promise<string | null>;
  leaseTakeRegistered(
    lease: string,
    epoch: string,
    expiry: string,
    heard: string,
    member: string,
    expected: string,
    ttlMs: number,
  ): Promise<string | null>;
  partitionBeat(expiry: string, heard: string, member: string, ttlMs: number): Promise<number>;
  leaseCheck(lease: string, epoch: string, token: string): Promise<number>;
  leaseRelease(lease: string, token: string): Promise<number>;
  memberBeat(
    members: string,
    expiry: string,
    heard: string,
    id: string,
    description: string,
    ttlMs: number,
  ): Promise<string[]>;
  memberLeave(members: string, expiry: string, id: string): Promise<number>;
  memberAlive(expiry: string, heard: string, id: string, ttlMs: number): Promise<number>;
  fencedAck(lease: string, inbox: string, token: string, group: string, ...ids: string[]): Promise<number>;
  inboxTrim(inbox: string, group: string): Promise<number>;
}

const defined = new WeakSet<RedisClient>();

/** The connection with the scripts defined on it. */
export function withScripts(redis: RedisClient): RedisClient & ScriptCommands {
  if (!defined.has(redis)) {
    redis.defineCommand('fencedWriteRaw', { lua: FENCED_WRITE });
    redis.defineCommand('fencedDrop', { lua: FENCED_DROP, numberOfKeys: 2 });
    redis.defineCommand('createDoc', { lua: CREATE_DOC, numberOfKeys: 2 });
    redis.defineCommand('leaseTake', { lua: LEASE_TAKE, numberOfKeys: 2 });
    redis.defineCommand('leaseTakeRegistered', { lua: LEASE_TAKE_REGISTERED, numberOfKeys: 4 });
    redis.defineCommand('partitionBeat', { lua: PARTITION_BEAT, numberOfKeys: 2 });
    redis.defineCommand('leaseCheck', { lua: LEASE_CHECK, numberOfKeys: 2 });
    redis.defineCommand('leaseRelease', { lua: LEASE_RELEASE, numberOfKeys: 1 });
    redis.defineCommand('memberBeat', { lua: MEMBER_BEAT, numberOfKeys: 3 });
    redis.defineCommand('memberLeave', { lua: MEMBER_LEAVE, numberOfKeys: 2 });
    redis.defineCommand('memberAlive', { lua: MEMBER_ALIVE, numberOfKeys: 2 });
    redis.defineCommand('fencedAck', { lua: FENCED_ACK, numberOfKeys: 2 });
    redis.defineCommand('inboxTrim', { lua: INBOX_TRIM, numberOfKeys: 1 });
    defined.add(redis);
  }
  const raw = redis as RedisClient & ScriptCommands & { fencedWriteRaw(...args: unknown[]): Promise<number> };
  // A variable number of keys: ioredis takes their count as the first argument. Arrays are flattened by ioredis,
  // not spread here: a spread of 100,000 node states would pass the engine's limit on arguments.
  raw.fencedWrite = (keys, args) => raw.fencedWriteRaw(keys.length, keys, args);
  return raw;
}

/** Whether a script's failure is its fence refusing the write. */
export function isFenced(e: unknown): boolean {
  return e instanceof Error && e.message.startsWith('FENCED ');
}
