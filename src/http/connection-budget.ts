// The API's share of the process's open files. Node connections (two per node), API connections and event feeds all
// hold open files, so the API refuses first: past max_connections_per_address for one address (429), and for
// everyone once fewer than node_connection_reserve files are free (503), leaving those to the nodes' ZeroMQ
// connections. Refusals are counted by the setting that made them, for GET /_status and the metrics.
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { LimitsStatus } from '../api/status-schema.js';
import { realTimers, type Timers } from '../lib/timers.js';
import { countOpenFiles, type FileLimits } from './open-files.js';

export const HTTP_REFUSALS = [
  'max_connections_per_address',
  'node_connection_reserve',
  'max_event_streams',
  'header_timeout',
  'request_timeout',
  'slow_reader',
  // Not a setting: accept() failed, the process being out of open files (libuv then closes what waits unaccepted).
  'accept_failed',
] as const;
export type HttpRefusal = (typeof HTTP_REFUSALS)[number];

/** How often the files the process holds are counted again (between counts, API connections are added up). */
const SAMPLE_MS = 1000;
/** A refused connection gets this long to read its answer before it is closed. */
const REFUSED_GRACE_MS = 1000;

export interface BudgetSettings {
  maxConnectionsPerAddress: number;
  /** Open files kept for node connections. */
  reserve: number;
  files: FileLimits;
}

export class ConnectionBudget {
  private readonly refusedCounts = Object.fromEntries(HTTP_REFUSALS.map((r) => [r, 0])) as Record<HttpRefusal, number>;
  private readonly byAddress = new Map<string, number>();
  /** API connections open now, and how many were ever opened and closed. */
  private connections = 0;
  private opened = 0;
  private closed = 0;
  /**
   * Files open at the last count, and the API connections opened before it began and closed before it ended. The
   * count reads a folder, which takes a moment: a connection opened meanwhile counts as opened after it, and one
   * closed meanwhile as closed before it, so the sum errs high, never low.
   */
  private counted = 0;
  private openedAtCount = 0;
  private closedAtCount = 0;
  /** Stops the counting, once started. */
  private stopSampling: (() => void) | undefined;
  /** Sockets refused when they connected: a request read from one anyway is not answered. */
  private readonly refusedSockets = new WeakSet<Socket>();
  /** Sockets whose current request's headers arrived: a timeout there is the request's, not the headers'. */
  private readonly inRequest = new WeakSet<Socket>();

  /** `timers`: when the files are counted again; Node's unless a test runs the budget on a clock of its own. */
  constructor(
    private readonly settings: BudgetSettings,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Starts counting the process's open files. */
  async start(): Promise<void> {
    await this.count();
    this.stopSampling = this.timers.every(SAMPLE_MS, () => void this.count(), { unref: true });
  }

  stop(): void {
    this.stopSampling?.();
  }

  /** Files open now: the last count, and the API connections opened or closed since. */
  get openFiles(): number {
    return Math.max(0, this.counted + (this.opened - this.openedAtCount) - (this.closed - this.closedAtCount));
  }

  refused(reason: HttpRefusal): void {
    this.refusedCounts[reason] += 1;
  }

  /**
   * Guards `server`'s connections: each is counted, and one past a limit is answered at once and closed.
   * `perAddress`: whether max_connections_per_address applies (not on a member's own port, which takes the
   * requests the other members pass on, all from a few addresses).
   */
  guard(server: HttpServer, perAddress: boolean): void {
    server.on('connection', (socket: Socket) => this.admit(socket, perAddress));
    // Out of open files after all (files opened elsewhere since the last count): Node reports it as the server's
    // error, which would end the process unheard.
    server.on('error', (e: Error & { syscall?: string }) => {
      if (e.syscall === 'accept') this.refused('accept_failed');
    });
    // A request on a connection already refused is not answered again; every other goes on to the routes.
    const listeners = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.refusedSockets.has(req.socket)) return;
      this.inRequest.add(req.socket);
      res.once('finish', () => this.inRequest.delete(req.socket));
      for (const listener of listeners) listener(req, res);
    });
  }

  /** Which timeout a connection closed by Node's request timer ran out of. */
  timedOut(socket: Socket): HttpRefusal {
    const reason = this.inRequest.has(socket) ? 'request_timeout' : 'header_timeout';
    this.refused(reason);
    return reason;
  }

  figures(eventStreams: number): Omit<LimitsStatus, 'files'> & { files: LimitsStatus['files'] } {
    return {
      files: {
        limit: this.settings.files.soft,
        hard_limit: this.settings.files.hard,
        open: this.openFiles,
        node_connection_reserve: this.settings.reserve,
      },
      http: { connections: this.connections, event_streams: eventStreams, refused: { ...this.refusedCounts } },
    };
  }

  private admit(socket: Socket, perAddress: boolean): void {
    const address = socket.remoteAddress ?? '';
    const held = this.byAddress.get(address) ?? 0;
    this.connections += 1;
    this.opened += 1;
    this.byAddress.set(address, held + 1);
    socket.once('close', () => {
      this.connections -= 1;
      this.closed += 1;
      const now = (this.byAddress.get(address) ?? 1) - 1;
      if (now === 0) this.byAddress.delete(address);
      else this.byAddress.set(address, now);
    });
    const { soft } = this.settings.files;
    const free = soft - this.openFiles;
    if (soft > 0 && free < this.settings.reserve / 2) {
      // Deep in the reserve, a refusal is not answered: an answer holds its file until the client has read it, and a
      // burst of connections accepted at once (up to the listen backlog) would spend the reserve on answers.
      this.refused('node_connection_reserve');
      socket.destroy();
    } else if (soft > 0 && free < this.settings.reserve) {
      this.refuse(socket, 'node_connection_reserve', 503, 'Service Unavailable', [
        `The server keeps its last ${this.settings.reserve} open files for node connections (node_connection_reserve); try again later`,
      ]);
    } else if (perAddress && held >= this.settings.maxConnectionsPerAddress) {
      this.refuse(socket, 'max_connections_per_address', 429, 'Too Many Requests', [
        `Too many connections from ${address}: at most ${this.settings.maxConnectionsPerAddress} at once (max_connections_per_address)`,
      ]);
    }
  }

  /**
   * Answered before any request is read: whatever the client sends, this is its answer. Its end of the connection
   * closes once it has read it, or after a moment.
   */
  private refuse(socket: Socket, reason: HttpRefusal, code: number, text: string, error: string[]): void {
    this.refused(reason);
    this.refusedSockets.add(socket);
    const body = JSON.stringify({ error });
    const retry = code === 503 ? 'Retry-After: 1\r\n' : '';
    socket.end(
      `HTTP/1.1 ${code} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
    );
    socket.setTimeout(REFUSED_GRACE_MS, () => socket.destroy());
  }

  private async count(): Promise<void> {
    const opened = this.opened;
    const open = await countOpenFiles();
    if (open === undefined) return;
    this.counted = open;
    this.openedAtCount = opened;
    this.closedAtCount = this.closed;
  }
}
