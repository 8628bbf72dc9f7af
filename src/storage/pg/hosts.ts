// DATABASE_URL may list several hosts, as libpq allows
// (postgresql://h1:5432,h2:5433/db?target_session_attrs=read-write), for a
// PostgreSQL with standbys. node-postgres connects to one host and knows
// nothing of target_session_attrs, so the host is chosen here, as libpq
// chooses it: the first host, in the order listed, that accepts a connection
// and (for read-write) answers `SHOW transaction_read_only` with off, or (for
// primary) is not in recovery. The choice is shared by every connection the
// process opens to that URL and made again when a connection to the chosen
// host fails: after a failover the next connection goes to the new primary.
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { parseDatabaseUrl, type DatabaseHost, type DatabaseHosts } from '../../config/database-url.js';

export type { DatabaseHost };

/** Seconds, as libpq's connect_timeout; how long a host gets to accept a connection and answer while one is chosen. */
const DEFAULT_CONNECT_TIMEOUT_S = 5;

/** No listed host accepts the sessions asked for (all down, or only standbys while a failover is under way). */
export class NoAcceptableHost extends Error {}

/**
 * Chooses the host for the connections to one DATABASE_URL and keeps the
 * choice until a connection to it fails. Emits ('chosen', host, refusals)
 * when it picks a host other than the one before (the first pick included),
 * with why each host listed before it was passed over.
 */
export class HostLocator extends EventEmitter {
  private previous: DatabaseHost | null = null;
  private chosen: DatabaseHost | null = null;
  private choosing: Promise<DatabaseHost> | null = null;
  private readonly connectTimeoutMs: number;

  constructor(readonly database: DatabaseHosts) {
    super();
    const timeout = /[?&]connect_timeout=(\d+)/.exec(database.hosts[0]!.url)?.[1];
    this.connectTimeoutMs = (timeout && Number(timeout) > 0 ? Number(timeout) : DEFAULT_CONNECT_TIMEOUT_S) * 1000;
  }

  /** The host to connect to now; tries every host in order when none is chosen (one search at a time). */
  target(): Promise<DatabaseHost> {
    if (this.chosen) return Promise.resolve(this.chosen);
    this.choosing ??= this.choose().finally(() => (this.choosing = null));
    return this.choosing;
  }

  /** A connection to `host` failed or found it unfit: the next connection looks again. */
  lost(host: DatabaseHost): void {
    if (this.chosen === host) this.chosen = null;
  }

  /** The server at `server` (host:port, as serverOf gives it) stopped answering: the next connection looks again. */
  lostAt(server: string): void {
    if (this.chosen && `${this.chosen.host}:${this.chosen.port}` === server) this.chosen = null;
  }

  /** Why `client`, connected, does not give the sessions asked for; null if it does. */
  async unfit(client: pg.ClientBase): Promise<string | null> {
    switch (this.database.targetSessionAttrs) {
      case 'any':
        return null;
      case 'read-write': {
        const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
        return rows[0]?.transaction_read_only === 'off' ? null : 'read-only (a standby, or default_transaction_read_only is on)';
      }
      case 'primary': {
        const { rows } = await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
        return rows[0]?.recovery === false ? null : 'in recovery (a standby)';
      }
    }
  }

  private async choose(): Promise<DatabaseHost> {
    const refusals: string[] = [];
    for (const host of this.database.hosts) {
      const client = new pg.Client({ connectionString: host.url, connectionTimeoutMillis: this.connectTimeoutMs, query_timeout: this.connectTimeoutMs });
      client.on('error', () => {});
      try {
        await client.connect();
        const why = await this.unfit(client);
        if (why === null) {
          this.chosen = host;
          if (this.previous !== host) this.emit('chosen', host, refusals);
          this.previous = host;
          return host;
        }
        refusals.push(`${host.host}:${host.port} is ${why}`);
      } catch (err) {
        // A network error by its code (ECONNREFUSED), anything else (a refused user, a missing database) in PostgreSQL's words.
        const { code, message } = err as Error & { code?: string };
        refusals.push(`${host.host}:${host.port}: ${code?.startsWith('E') ? code : message}`);
      } finally {
        await client.end().catch(() => {});
      }
    }
    throw new NoAcceptableHost(`no host of DATABASE_URL accepts ${this.database.targetSessionAttrs} sessions: ${refusals.join('; ')}`);
  }
}

/** One locator per URL in the process: the pool, the LISTEN connection and one-off clients share its choice. */
const locators = new Map<string, HostLocator>();

/** The locator for `connectionString`, or null when it names one host and asks for no check (node-postgres connects as it is). */
export function locatorFor(connectionString: string): HostLocator | null {
  const known = locators.get(connectionString);
  if (known) return known;
  const database = parseDatabaseUrl(connectionString);
  if (database.hosts.length === 1 && database.targetSessionAttrs === 'any') return null;
  const locator = new HostLocator(database);
  locators.set(connectionString, locator);
  return locator;
}

type ConnectCallback = (err: Error | null, client?: pg.Client) => void;

/**
 * A pg.Client class whose connect() goes to the host `locator` chooses and
 * checks the session there (a failover may have turned it into a standby
 * since it was chosen). A failure makes the locator look again next time.
 */
function locatingClient(locator: HostLocator): typeof pg.Client {
  return class LocatingClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      const connected = this.connectToChosen();
      if (!callback) return connected;
      connected.then(
        (c) => callback(null, c),
        (err: Error) => callback(err),
      );
    }

    private async connectToChosen(): Promise<pg.Client> {
      const host = await locator.target();
      const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
      self.host = self.connectionParameters.host = host.host;
      self.port = self.connectionParameters.port = host.port;
      try {
        await super.connect();
      } catch (err) {
        locator.lost(host);
        throw err;
      }
      const why = await locator.unfit(this).catch((err: Error) => `unusable: ${err.message}`);
      if (why === null) return this;
      locator.lost(host);
      await this.end().catch(() => {});
      throw new NoAcceptableHost(`PostgreSQL at ${host.host}:${host.port} is ${why}: looking for the ${locator.database.targetSessionAttrs} host of DATABASE_URL again`);
    }
  };
}

/** How node-postgres is to connect to `connectionString`: the client class and the URL to hand it (one host's, when several are listed). */
export function connectionFor(connectionString: string): { Client: typeof pg.Client; connectionString: string } {
  const locator = locatorFor(connectionString);
  if (!locator) return { Client: pg.Client, connectionString };
  return { Client: clientClasses.get(locator) ?? clientClasses.set(locator, locatingClient(locator)).get(locator)!, connectionString: locator.database.hosts[0]!.url };
}
const clientClasses = new WeakMap<HostLocator, typeof pg.Client>();

/** Where a connected client of the storage layer is connected (host:port), to tell servers apart after a failover. */
export function serverOf(client: pg.ClientBase): string {
  const c = client as unknown as { host: string; port: number };
  return `${c.host}:${c.port}`;
}
