// `processes N`: one infra-server command starts N server processes on this machine, members of one cluster on
// the configured Redis. They share api_port (Node's cluster module hands each connection to one of them); member i
// binds its own ZeroMQ ports, server_heartbeat_port + 10·i and command_port + 10·i (and metrics_port + 10·i), since
// every node connects to the member the config endpoint names, and takes the requests the other members pass on
// at api_port + 10·(i + 1). The first process only supervises: it starts the
// members, starts again any that dies, and stops them all on SIGTERM or SIGINT.
import cluster, { type Worker } from 'node:cluster';
import type { ServerConfig } from './config/server-config.js';
import type { Logger } from './lib/logger.js';

/** Set in each member's environment: its index, from 0. */
export const MEMBER_INDEX_ENV = 'INFRA_MEMBER_INDEX';
/** How far apart the members' ZeroMQ and metrics ports are. */
export const MEMBER_PORT_STEP = 10;
/** A member that died is started again after this long, doubling while it keeps dying, up to the most. */
const RESTART_FIRST_MS = 1000;
const RESTART_MOST_MS = 30_000;
/** A member that ran this long before it died counts as healthy: its next restart waits the first delay again. */
const HEALTHY_RUN_MS = 60_000;

/** Whether this process supervises members instead of serving. */
export function supervises(config: ServerConfig): boolean {
  return config.processes > 1 && cluster.isPrimary;
}

/** This process's settings as member `index` of its machine (port 0 stays 0: any free port). */
export function memberConfig(config: ServerConfig, index = memberIndex()): ServerConfig {
  const shift = (port: number) => (port === 0 ? 0 : port + MEMBER_PORT_STEP * index);
  return {
    ...config,
    server_heartbeat_port: shift(config.server_heartbeat_port),
    command_port: shift(config.command_port),
    ...(config.metrics_port === undefined ? {} : { metrics_port: shift(config.metrics_port) }),
  };
}

/**
 * The port member `index` takes the requests other members pass on at: api_port + 10·(index + 1), beside the
 * shared api_port (0 stays 0).
 */
export function memberApiPort(config: ServerConfig, index = memberIndex()): number {
  return config.api_port === 0 ? 0 : config.api_port + MEMBER_PORT_STEP * (index + 1);
}

export function memberIndex(): number {
  const index = Number(process.env[MEMBER_INDEX_ENV] ?? 0);
  return Number.isInteger(index) && index >= 0 ? index : 0;
}

/** Starts the members and keeps them running; resolves once they all stopped after a signal. */
export function superviseMembers(config: ServerConfig, log: Logger): Promise<void> {
  let stopping = false;
  const delays = new Map<number, number>();
  const start = (index: number): void => {
    const worker = cluster.fork({ [MEMBER_INDEX_ENV]: String(index) });
    const startedAt = Date.now();
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      const healthy = Date.now() - startedAt >= HEALTHY_RUN_MS;
      const wait = healthy ? RESTART_FIRST_MS : Math.min(RESTART_MOST_MS, delays.get(index) ?? RESTART_FIRST_MS);
      delays.set(index, Math.min(RESTART_MOST_MS, wait * 2));
      log.error(`member ${index} exited (code ${code}, signal ${signal}); starting it again in ${wait} ms`);
      setTimeout(() => {
        if (!stopping) start(index);
      }, wait);
    });
  };
  log.info(`starting ${config.processes} server processes sharing port ${config.api_port}`);
  for (let i = 0; i < config.processes; i++) start(i);
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      log.info('stopping the members', { signal });
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
      let left = workers.length;
      if (left === 0) resolve();
      for (const w of workers) {
        w.once('exit', () => {
          left -= 1;
          if (left === 0) resolve();
        });
        w.process.kill(signal);
      }
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
