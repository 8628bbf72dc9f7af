// A statement that waits long for PostgreSQL may wait for nothing. A server
// whose machine vanished (power lost, a network cut) closes nothing, and a
// firewall or NAT that forgot a connection drops its packets while the server
// lives on: either way the statement waits for the operating system's TCP
// retransmission time-out, about 15 minutes, and the requests behind it with
// it. So a statement that has waited long is the cue to ask the server, on a
// new connection, whether it still answers and what the stalled connections'
// backends are doing:
// - no answer: every watched connection to that server is dropped, and a
//   DATABASE_URL listing several hosts looks for the primary again;
// - an answer, and a stalled connection's backend is idle: the statement or
//   its answer was lost on the way, and that connection is dropped;
// - an answer, and the backend is running the statement (slow, or waiting
//   for a lock): it is left alone.
// A dropped connection's statement fails as after a restart, and its caller
// settles or retries it as it does then.
import pg from 'pg';
import { parseDatabaseUrl } from '../../config/database-url.js';
import type { Logger } from '../../observability/logger.js';
import { LogCode } from '../../observability/log-codes.js';
import { locatorFor, serverOf } from './hosts.js';

export interface ServerWatchOptions {
  /** DATABASE_URL: the probe goes to the listed host a stalled connection is on. */
  connectionString: string;
  /** A statement waiting this long for its answer starts a probe; 0 turns the watch off. */
  stallMs: number;
  /** How long the probe's new connection gets to be accepted and answer. */
  probeTimeoutMs: number;
  /** The client class to probe with (pg.Client by default). */
  Client?: typeof pg.Client;
  log: Logger;
}

/** node-postgres's own fields the watch reads: the statement in flight and the socket (no public API gives either). */
interface ClientInternals {
  _activeQuery: object | null;
  processID: number | null;
  connection: { stream: { destroy(err?: Error): void } };
}

/** The statement a connection had in flight when last looked at, and since when. */
interface Seen {
  query: object | null;
  since: number;
}

interface Stalled {
  client: pg.ClientBase;
  query: object;
  waitedMs: number;
}

export class ServerWatch {
  private readonly clients = new Map<pg.ClientBase, Seen>();
  private readonly probing = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: ServerWatchOptions) {}

  /** Watches `client` until it ends. */
  add(client: pg.ClientBase): void {
    if (this.o.stallMs <= 0) return;
    this.clients.set(client, { query: null, since: performance.now() });
    client.once('end', () => this.clients.delete(client));
    if (!this.timer) {
      // Looked at a few times per stall time: a stall is seen at most a quarter late.
      this.timer = setInterval(() => this.look(), Math.max(50, Math.floor(this.o.stallMs / 4)));
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clients.clear();
  }

  private look(): void {
    const now = performance.now();
    const stalled = new Map<string, Stalled[]>();
    for (const [client, seen] of this.clients) {
      const query = internals(client)._activeQuery;
      if (query !== seen.query) this.clients.set(client, { query, since: now });
      else if (query !== null && now - seen.since >= this.o.stallMs) {
        const server = serverOf(client);
        stalled.set(server, [...(stalled.get(server) ?? []), { client, query, waitedMs: now - seen.since }]);
      }
    }
    for (const [server, clients] of stalled) if (!this.probing.has(server)) this.probe(server, clients);
  }

  private probe(server: string, stalled: Stalled[]): void {
    this.probing.add(server);
    const waitedMs = Math.round(Math.max(...stalled.map((s) => s.waitedMs)));
    void this.ask(server, stalled)
      .then((answer) => {
        if ('unanswered' in answer) {
          const dropped = this.drop(
            [...this.clients.keys()].filter((c) => serverOf(c) === server),
            `PostgreSQL at ${server} stopped answering (${answer.unanswered})`,
          );
          locatorFor(this.o.connectionString)?.lostAt(server);
          this.o.log.warn(
            { server, waitedMs, probeTimeoutMs: this.o.probeTimeoutMs, probe: answer.unanswered, connections: dropped, code: LogCode.DATABASE_UNANSWERED },
            'PostgreSQL does not answer a new connection while a statement waits: its connections are dropped',
          );
          return;
        }
        // Still waiting on the same statement (not answered meanwhile) while its backend does nothing.
        const lost = stalled.filter((s) => answer.idle.has(internals(s.client).processID ?? -1) && internals(s.client)._activeQuery === s.query);
        if (lost.length === 0) return;
        this.drop(
          lost.map((s) => s.client),
          `PostgreSQL at ${server} is not running the statement this connection waits for: it or its answer was lost on the way`,
        );
        this.o.log.warn(
          { server, waitedMs, connections: lost.length, code: LogCode.DATABASE_STATEMENT_LOST },
          "a statement waits while PostgreSQL shows its connection's backend idle: the connection is dropped",
        );
      })
      .finally(() => this.probing.delete(server));
  }

  /** Whether the server answers a new connection in time (an error of its own is an answer), and which of the stalled connections' backends are idle. */
  private async ask(server: string, stalled: Stalled[]): Promise<{ unanswered: string } | { idle: Set<number> }> {
    const host = parseDatabaseUrl(this.o.connectionString).hosts.find((h) => `${h.host}:${h.port}` === server);
    const Client = this.o.Client ?? pg.Client;
    const probe = new Client({ connectionString: host?.url ?? this.o.connectionString, connectionTimeoutMillis: this.o.probeTimeoutMs, query_timeout: this.o.probeTimeoutMs });
    probe.on('error', () => {});
    try {
      await probe.connect();
      const pids = stalled.flatMap((s) => internals(s.client).processID ?? []);
      // A backend not listed (a pooler in between gives other ids) is not judged.
      const { rows } = await probe.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND state LIKE 'idle%'", [pids]);
      return { idle: new Set(rows.map((r) => r.pid)) };
    } catch (err) {
      // PostgreSQL's own refusal (too many connections, shutting down) carries an SQLSTATE: the server is there.
      const { code, message } = err as Error & { code?: string };
      return code && /^[0-9A-Z]{5}$/.test(code) ? { idle: new Set() } : { unanswered: code ?? message };
    } finally {
      void probe.end().catch(() => {});
    }
  }

  private drop(clients: pg.ClientBase[], why: string): number {
    for (const client of clients) internals(client).connection.stream.destroy(new Error(why));
    return clients.length;
  }
}

function internals(client: pg.ClientBase): ClientInternals {
  return client as unknown as ClientInternals;
}
