import type { ApiCodec, Input } from '../protocol/codec/types.js';
import type { Logger } from '../observability/logger.js';
import type { BrokerContext } from '../broker-context.js';
import type { SecurityProtocol, SecuritySession } from '../security/session.js';

/** What a handler knows about the request it is serving. */
export interface RequestContext {
  broker: BrokerContext;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** The client's address as Kafka reports it ("/127.0.0.1"). */
  clientHost: string;
  /** The listener the request came through (its name is its security protocol). */
  listener: SecurityProtocol;
  /** The authenticated principal: "User:<name>" after SASL, the TLS client certificate's subject, or "User:ANONYMOUS". */
  principal: string;
  /** The connection's authentication state (the SASL handlers drive it). */
  session: SecuritySession;
  log: Logger;
}

/**
 * A response that will be ready later. A handler returns one once the
 * request's effects are ordered (Produce: its batches are queued for their
 * partitions' next flush), so the connection can read the next Produce
 * request while this one waits for its PostgreSQL commit. Responses still
 * leave in request order.
 */
export class Deferred<T> {
  constructor(readonly result: Promise<T>) {}
}

/**
 * One Kafka API. The registry builds ApiVersions from these ranges, so the
 * broker never advertises a version it cannot handle. A handler returns the
 * response, or null when the protocol says there is none (Produce acks=0).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry holds handlers of every API; each handler file fixes its own request and response types
export interface Handler<Req = any, Res = any> {
  codec: ApiCodec<Req, Res>;
  minVersion: number;
  maxVersion: number;
  /** Lowest version advertised in ApiVersions when it differs from minVersion (Produce: 0, see KAFKA-18659). */
  advertisedMinVersion?: number;
  handle(ctx: RequestContext, request: Req): Promise<Input<Res> | null | Deferred<Input<Res> | null>>;
}

export function defineHandler<Req, Res>(handler: Handler<Req, Res>): Handler<Req, Res> {
  return handler;
}
