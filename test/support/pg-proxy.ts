// A TCP proxy between a broker and PostgreSQL that reads the PostgreSQL wire
// protocol just enough to cut a connection at a chosen point around an
// append statement's commit: before PostgreSQL sees the statement, halfway
// through it, after it ran but before its Sync (the commit), with the Sync
// arriving after the broker saw the cut, or after the
// commit with the answer withheld; or to go silent both ways without closing
// anything, as a server whose machine vanished. Everything else passes through unchanged.
import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * Where the next append statement's connection is cut:
 * - `before-bind`: PostgreSQL never sees the statement (not committed);
 * - `mid-bind`: it sees half of the statement, then end of file (not committed);
 * - `before-sync`: it runs the statement but never gets the Sync, and its
 *   connection is closed (rolled back when the backend notices);
 * - `hold-before-sync`: the same, but PostgreSQL's side stays open, so the
 *   backend keeps its uncommitted rows and locks until someone ends it;
 * - `late-sync`: the broker's side is cut when the Sync comes, and the Sync
 *   reaches PostgreSQL 50 ms later, as over a slow network: the commit may
 *   come after the broker saw the connection fail;
 * - `after-commit`: the whole statement and its commit reach PostgreSQL, its
 *   answer does not (committed, unacknowledged);
 * - `{ afterMs }`: the whole statement goes through and the answer is held;
 *   the connection is cut that long after the Sync was forwarded;
 * - `hold-answer`: the whole statement goes through and the answer is held
 *   until PostgreSQL's side closes (the server died), then the broker's side
 *   is cut: the commit's answer is lost with its server (not in CUT_POINTS:
 *   the test must end the server).
 */
export type CutPoint = 'before-bind' | 'mid-bind' | 'before-sync' | 'hold-before-sync' | 'late-sync' | 'after-commit' | 'hold-answer' | { afterMs: number };

export const CUT_POINTS: readonly CutPoint[] = ['before-bind', 'mid-bind', 'before-sync', 'hold-before-sync', 'late-sync', 'after-commit', { afterMs: 0 }, { afterMs: 2 }];

const LATE_SYNC_MS = 50;

interface Armed {
  point: CutPoint;
  statement: RegExp;
  done: () => void;
}

/** Cuts a stream into PostgreSQL messages (type byte + int32 length), the first one optionally untyped (the startup message). */
class Frames {
  private buffer: Buffer = Buffer.alloc(0);
  constructor(private untypedFirst: boolean) {}

  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: Buffer[] = [];
    for (;;) {
      const head = this.untypedFirst ? 0 : 1;
      if (this.buffer.length < head + 4) break;
      const end = head + this.buffer.readInt32BE(head);
      if (this.buffer.length < end) break;
      out.push(this.buffer.subarray(0, end));
      this.buffer = this.buffer.subarray(end);
      this.untypedFirst = false;
    }
    return out;
  }
}

/** The prepared statement a Bind message names (after its portal name). */
function boundStatement(frame: Buffer): string {
  const portalEnd = frame.indexOf(0, 5);
  const statementEnd = frame.indexOf(0, portalEnd + 1);
  return frame.toString('utf8', portalEnd + 1, statementEnd);
}

export class PgProxy {
  private armed: Armed | null = null;
  /** PostgreSQL "down": every connection is cut and new ones are closed on arrival. */
  private down = false;
  /** PostgreSQL's machine gone: new connections are accepted and never answered. */
  private vanished = false;
  /** Connections on which nothing passes any more, either way, and nothing is closed. */
  private readonly silenced = new Set<Socket>();
  private readonly sockets = new Set<Socket>();
  /** Cuts made so far, by point. */
  readonly cuts: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free loopback port and forwards to `target` (host:port). */
  static async start(targetHost: string, targetPort: number): Promise<PgProxy> {
    let proxy: PgProxy | null = null;
    const server = createServer((client) => proxy!.accept(client, targetHost, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new PgProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  /** `databaseUrl` with its host and port replaced by the proxy's. */
  static urlThrough(databaseUrl: string, port: number): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return url.toString();
  }

  /** Arms a cut of the next Bind of a statement matching `statement`; resolves once it has been cut. */
  arm(point: CutPoint, statement: RegExp = /^pgkafka_append/): Promise<void> {
    if (this.armed) throw new Error('a cut is already armed');
    return new Promise((done) => (this.armed = { point, statement, done }));
  }

  get isArmed(): boolean {
    return this.armed !== null;
  }

  disarm(): void {
    this.armed = null;
  }

  /** Cuts every connection and refuses new ones until `up()`, as a PostgreSQL that went away. */
  goDown(): void {
    this.down = true;
    for (const s of this.sockets) s.destroy();
  }

  /** Forwards nothing more either way and closes nothing (new connections are accepted and never answered), as a server whose machine vanished. */
  vanish(): void {
    this.vanished = true;
    for (const s of this.sockets) this.silenced.add(s);
  }

  /**
   * Serves again: new connections go through. Those silenced stay silent, as
   * connections that a firewall or NAT forgot while the server lives on.
   */
  up(): void {
    this.down = false;
    this.vanished = false;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (this.down) {
      client.destroy();
      return;
    }
    if (this.vanished) {
      client.on('error', () => {});
      this.sockets.add(client);
      this.silenced.add(client);
      client.on('close', () => {
        this.sockets.delete(client);
        this.silenced.delete(client);
      });
      return;
    }
    const server = connect(port, host);
    // Messages are forwarded one by one: without this, Nagle's algorithm holds the small ones back.
    client.setNoDelay(true);
    server.setNoDelay(true);
    this.sockets.add(client);
    this.sockets.add(server);
    const forget = (s: Socket) => () => {
      this.sockets.delete(s);
      this.silenced.delete(s);
    };
    client.on('close', forget(client));
    server.on('close', forget(server));
    client.on('error', () => {});
    server.on('error', () => {});
    client.on('close', () => cut === null && server.destroy());
    server.on('close', () => (cut?.point === 'hold-answer' ? finish(false) : client.destroy()));

    const fromClient = new Frames(true);
    const fromServer = new Frames(false);
    /** The cut this connection's append statement is under, once its Bind is seen. */
    let cut: Armed | null = null;
    let synced = false;
    let holding = false;
    const finish = (keepServer: boolean) => {
      if (!cut) return;
      this.cuts.push(typeof cut.point === 'string' ? cut.point : `after ${cut.point.afterMs} ms`);
      client.destroy();
      if (!keepServer) server.destroy();
      cut.done();
    };

    client.on('data', (chunk) => {
      if (this.silenced.has(client)) return;
      if (cut && (cut.point === 'before-bind' || cut.point === 'mid-bind' || synced)) return;
      for (const frame of fromClient.push(chunk)) {
        if (!cut && this.armed && frame[0] === 0x42 /* Bind */ && this.armed.statement.test(boundStatement(frame))) {
          cut = this.armed;
          this.armed = null;
          const point = cut.point;
          if (point === 'before-bind') return finish(false);
          if (point === 'mid-bind') {
            server.write(frame.subarray(0, Math.max(1, frame.length >> 1)), () => finish(false));
            return;
          }
        }
        if (cut && frame[0] === 0x53 /* Sync */) {
          if (cut.point === 'before-sync') return finish(false);
          if (cut.point === 'hold-before-sync') return finish(true);
          if (cut.point === 'late-sync') {
            finish(true);
            setTimeout(() => server.write(frame), LATE_SYNC_MS);
            return;
          }
          synced = true;
          holding = true;
          server.write(frame);
          const point = cut.point;
          if (typeof point === 'object') setTimeout(() => finish(false), point.afterMs);
          return;
        }
        server.write(frame);
      }
    });
    server.on('data', (chunk) => {
      if (this.silenced.has(client)) return;
      for (const frame of fromServer.push(chunk)) {
        // While a cut is pending, nothing of the statement's answer reaches the broker.
        if (holding || (cut && !synced)) {
          if (frame[0] === 0x5a /* ReadyForQuery: committed */ && cut!.point === 'after-commit') finish(false);
          if (frame[0] === 0x5a && cut!.point === 'late-sync') server.destroy();
          continue;
        }
        client.write(frame);
      }
    });
  }
}
