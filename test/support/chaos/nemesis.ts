// The nemesis's schedule: a seeded pseudo-random generator and the pure planner of a run's faults, one a round, so
// that a printed seed replays the same schedule. Applying the faults is the cluster under test's business.

export const FAULT_KINDS = ['kill', 'pause', 'redis_restart', 'sentinel_failover', 'cluster_failover'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Kinds that hit one member (a server process); the others hit Redis. */
export const MEMBER_FAULTS: ReadonlySet<FaultKind> = new Set<FaultKind>(['kill', 'pause']);

/**
 * How a failover is brought about: the operator's command (SENTINEL FAILOVER, CLUSTER FAILOVER), or kill -9 of the
 * master, which is started again as a replica once the fault's duration is over.
 */
export type FailoverWay = 'command' | 'kill';

export interface Fault {
  /** From 0. */
  round: number;
  kind: FaultKind;
  /**
   * The member hit by a kill or a pause, by its rank when the fault strikes: 0 is the member serving the default
   * organization, then the others in their order. A rank rather than a process, so that a seed replays the same
   * roles (the owner, a gateway) whichever process the hashing made the owner. Null for a fault of Redis.
   */
  target: number | null;
  /** Only for `sentinel_failover` and `cluster_failover`. */
  way: FailoverWay | null;
  /** From the start of the round (its long job's submission) to the fault, in ms. */
  offsetMs: number;
  /** From the fault to its healing (the member started again or woken, Redis or the old master back), in ms. */
  durationMs: number;
}

/** A closed range of milliseconds; `min === max` is a fixed time. */
export interface MsRange {
  min: number;
  max: number;
}

/** A kill lasts long enough for the lease to run out (5 s by default); a pause, for the member to be deposed. */
export const DEFAULT_DURATIONS: Readonly<Record<FaultKind, MsRange>> = {
  kill: { min: 10_000, max: 10_000 },
  pause: { min: 20_000, max: 20_000 },
  redis_restart: { min: 8000, max: 8000 },
  sentinel_failover: { min: 10_000, max: 10_000 },
  cluster_failover: { min: 10_000, max: 10_000 },
};

export const DEFAULT_OFFSET: MsRange = { min: 2000, max: 2000 };

export interface PlanOptions {
  seed: number;
  rounds: number;
  /** The kinds allowed; each block of `kinds.length` rounds holds every kind once, in a seeded order. */
  kinds: readonly FaultKind[];
  /** How many members a kill or pause may hit. */
  members: number;
  durations?: Partial<Record<FaultKind, MsRange>>;
  offset?: MsRange;
}

/** mulberry32: a 32-bit state, small and fast, good enough to pick faults (not for anything secret). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The faults of a run, one per round. Throws on options no run could follow. */
export function planFaults(o: PlanOptions): Fault[] {
  if (!Number.isInteger(o.rounds) || o.rounds < 0)
    throw new RangeError(`rounds must be a whole number, not ${o.rounds}`);
  if (o.kinds.length === 0) throw new RangeError('no fault kind is allowed');
  const kinds = [...new Set(o.kinds)];
  if (kinds.some((k) => MEMBER_FAULTS.has(k)) && !(Number.isInteger(o.members) && o.members >= 1))
    throw new RangeError(`a kill or pause needs at least one member, not ${o.members}`);
  const random = mulberry32(o.seed);
  const within = (r: MsRange) => {
    if (!(r.min >= 0 && r.max >= r.min)) throw new RangeError(`bad range ${r.min}-${r.max} ms`);
    return Math.round(r.min + (r.max - r.min) * random());
  };
  const pick = (n: number) => Math.min(n - 1, Math.floor(random() * n));
  const faults: Fault[] = [];
  let bag: FaultKind[] = [];
  for (let round = 0; round < o.rounds; round++) {
    // A shuffled bag rather than a draw per round: a short run still meets every kind allowed.
    if (bag.length === 0) bag = shuffled(kinds, pick);
    const kind = bag.pop() as FaultKind;
    const target = MEMBER_FAULTS.has(kind) ? pick(o.members) : null;
    const way =
      kind === 'sentinel_failover' || kind === 'cluster_failover' ? (random() < 0.5 ? 'command' : 'kill') : null;
    const offsetMs = within(o.offset ?? DEFAULT_OFFSET);
    const durationMs = within(o.durations?.[kind] ?? DEFAULT_DURATIONS[kind]);
    faults.push({ round, kind, target, way, offsetMs, durationMs });
  }
  return faults;
}

/** Fisher-Yates on a copy. */
function shuffled<T>(items: readonly T[], pick: (n: number) => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = pick(i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** `kill owner`, `pause other 2`, `redis_restart`, `sentinel_failover (kill)`: a fault as a table shows it. */
export function describeFault(f: Fault): string {
  const what = f.target === null ? f.kind : `${f.kind} ${f.target === 0 ? 'owner' : `other ${f.target}`}`;
  return `${what}${f.way === null ? '' : ` (${f.way})`} at +${f.offsetMs / 1000}s for ${f.durationMs / 1000}s`;
}

/** `kill,pause` as the benchmark's settings name kinds; throws on an unknown one. */
export function parseKinds(text: string): FaultKind[] {
  const kinds = text
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  for (const k of kinds) if (!(FAULT_KINDS as readonly string[]).includes(k)) throw new RangeError(`no fault ${k}`);
  return kinds as FaultKind[];
}

/** `kill:10000,pause:3000-20000`: durations by kind, each a time or a range in ms; throws on anything else. */
export function parseDurations(text: string): Partial<Record<FaultKind, MsRange>> {
  const out: Partial<Record<FaultKind, MsRange>> = {};
  for (const entry of text.split(',').filter((e) => e.trim() !== '')) {
    const m = /^\s*(\w+):(\d+)(?:-(\d+))?\s*$/.exec(entry);
    if (m === null) throw new RangeError(`bad duration ${entry}: KIND:MS or KIND:MIN-MAX`);
    const [kind] = parseKinds(m[1] ?? '');
    if (kind === undefined) throw new RangeError(`bad duration ${entry}`);
    out[kind] = { min: Number(m[2]), max: Number(m[3] ?? m[2]) };
  }
  return out;
}
