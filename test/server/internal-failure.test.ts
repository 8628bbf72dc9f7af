// A handler that throws (PostgreSQL unreachable, a bug) is answered by the
// connection as Kafka's RequestHandlerHelper.handleError answers: the API's
// error response (the request's resources echoed) with the code Kafka gives
// when that API's store fails, on the same connection; only the SASL APIs and
// Produce with acks=0 close it, as on Kafka. Every API the broker serves, at
// every version it serves, with random requests built from the spec.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrokerContext } from '../../src/broker-context.js';
import { handlers, HandlerRegistry } from '../../src/handlers/registry.js';
import { CLOSE, INTERNAL_FAILURE_CODES, internalFailureCode } from '../../src/handlers/storage-failure.js';
import type { Handler } from '../../src/handlers/types.js';
import { createLogger } from '../../src/observability/logger.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { SecuritySession } from '../../src/security/session.js';
import { Connection } from '../../src/server/connection.js';
import { errorCodes, inRange, loadSpecs, mulberry32, SpecModel } from '../protocol/messages/spec.js';
import { RawClient } from '../support/raw-client.js';

const specs = loadSpecs();
const SEED = Number(process.env.PROTOCOL_SEED ?? 0x4fa11ed);
const failing: Handler[] = handlers.map((h) => ({
  ...h,
  handle: async () => {
    throw new Error('Connection terminated unexpectedly');
  },
}));

let server: Server;
let bootstrap: string;

beforeAll(async () => {
  const registry = new HandlerRegistry(failing);
  const broker = { shuttingDown: false } as BrokerContext;
  const log = createLogger('fatal', process.stderr);
  server = createServer((socket) => {
    new Connection(socket, { registry, broker, log, maxFrameBytes: 1 << 20, session: new SecuritySession('PLAINTEXT', {} as never), pipeline: { maxInFlightRequests: 8, maxInFlightBytes: 1 << 20 } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  bootstrap = `127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('a request whose handler throws', () => {
  it('has a code chosen for every API the broker serves', () => {
    expect(handlers.filter((h) => !INTERNAL_FAILURE_CODES.has(h.codec.apiKey)).map((h) => h.codec.name)).toEqual([]);
  });

  for (const handler of handlers) {
    const { codec } = handler;
    const code = internalFailureCode(codec.apiKey);
    it(`${codec.name} v${handler.minVersion}-${handler.maxVersion}: ${code === CLOSE ? 'closes the connection' : 'is answered on the same connection'}`, async () => {
      const model = new SpecModel(specs.get(`${codec.name}Request`)!);
      const resSpec = specs.get(`${codec.name}Response`)!;
      const topError = resSpec.fields?.find((f) => f.name === 'ErrorCode');
      let client = await RawClient.connect(bootstrap);
      try {
        for (let v = handler.minVersion; v <= handler.maxVersion; v++) {
          const rnd = mulberry32(SEED + codec.apiKey * 100 + v);
          for (let i = 0; i < 3; i++) {
            const body = model.random(v, rnd);
            if (codec.apiKey === 0) body.acks = -1;
            const where = `${codec.name} v${v} #${i}`;
            if (code === CLOSE) {
              await expect(client.request(codec, v, body as never), where).rejects.toThrow(/connection closed/);
              client = await RawClient.connect(bootstrap);
              continue;
            }
            const res = (await client.request(codec, v, body as never)) as Record<string, unknown>;
            const codes = errorCodes(resSpec, res, v);
            if (codec.name === 'Metadata') codes.pop(); // v13's top-level code is REBOOTSTRAP_REQUIRED's only
            expect(
              codes.filter((c) => c !== code),
              where,
            ).toEqual([]);
            if (topError && inRange(topError.versions, v) && codec.name !== 'Metadata') expect(res.errorCode, where).toBe(code);
          }
        }
        if (code !== CLOSE) expect(client.closed).toBe(false);
      } finally {
        client.close();
      }
    });
  }

  it('Produce with acks=0 closes the connection, as Kafka does when it cannot answer', async () => {
    const produce = failing.find((h) => h.codec.apiKey === 0)!;
    const client = await RawClient.connect(bootstrap);
    client.write(client.encode(produce.codec, 9, { acks: 0, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records: null }] }] }));
    expect(await client.nextFrame()).toBeNull();
  });

  it('answers the storage codes Kafka uses: the log, the coordinators, the controller', () => {
    expect([0, 1, 2, 21].map(internalFailureCode)).toEqual(Array(4).fill(ErrorCode.KAFKA_STORAGE_ERROR));
    expect([8, 9, 10, 11, 22, 26].map(internalFailureCode)).toEqual(Array(6).fill(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    expect([19, 20, 30, 44].map(internalFailureCode)).toEqual(Array(4).fill(ErrorCode.REQUEST_TIMED_OUT));
  });
});
