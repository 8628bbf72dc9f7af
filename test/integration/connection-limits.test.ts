// Kafka's connection limits: max.connections, max.connections.per.ip and
// connections.max.idle.ms close only the connections beyond them.
import { afterEach, describe, expect, it } from 'vitest';
import { CreateTopicsApi, FetchApi, MetadataApi } from '../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../support/broker.js';
import { RawClient } from '../support/raw-client.js';

let broker: TestBroker | undefined;
const clients: RawClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await broker?.destroy();
  broker = undefined;
});

async function connect(b: TestBroker): Promise<RawClient> {
  const c = await RawClient.connect(b.bootstrap);
  clients.push(c);
  return c;
}

async function served(c: RawClient): Promise<boolean> {
  const answer = c.nextFrame();
  c.write(c.encode(MetadataApi, 12, { topics: null }));
  return (await answer) !== null;
}

describe('connection limits', () => {
  it('closes connections beyond max.connections.per.ip, and serves the others', async () => {
    broker = await startTestBroker({ maxConnectionsPerIp: 2 });
    const [a, b] = [await connect(broker), await connect(broker)];
    expect(await served(a)).toBe(true);
    expect(await served(b)).toBe(true);
    expect(await served(await connect(broker))).toBe(false);
    b.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(await served(await connect(broker))).toBe(true);
  });

  it('closes connections beyond max.connections', async () => {
    broker = await startTestBroker({ maxConnections: 1 });
    expect(await served(await connect(broker))).toBe(true);
    expect(await served(await connect(broker))).toBe(false);
  });

  it('closes a connection idle for connections.max.idle.ms, but not one parked in a long poll', async () => {
    broker = await startTestBroker({ connectionsMaxIdleMs: 300 });
    const idle = await connect(broker);
    const polling = await connect(broker);
    await polling.request(CreateTopicsApi, 7, { topics: [{ name: 'quiet', numPartitions: 1, replicationFactor: 1 }] });
    const parked = polling.request(FetchApi, 11, {
      replicaId: -1,
      maxWaitMs: 1000,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionEpoch: -1,
      topics: [{ topic: 'quiet', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
    });
    await new Promise((r) => setTimeout(r, 600));
    expect(idle.closed).toBe(true);
    expect((await parked).responses[0]!.partitions[0]!.errorCode).toBe(0);
    expect(polling.closed).toBe(false);
  });
});
