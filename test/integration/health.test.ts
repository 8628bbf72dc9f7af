// /health (the process is alive) and /ready (the Kafka listener accepts and
// PostgreSQL answers; 503 with the reason otherwise) on the metrics port.
import { createServer, connect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestBroker, testDatabaseUrl, type TestBroker } from '../support/broker.js';
import { within } from '../support/wait.js';

/** A TCP relay to the tests' PostgreSQL that can hold every byte (PostgreSQL then seems to hang). */
async function relay(target: URL): Promise<{ port: number; hold(on: boolean): void; close(): void }> {
  let holding = false;
  const pairs: [Socket, Socket][] = [];
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    pairs.push([client, upstream]);
    if (holding) {
      client.pause();
      upstream.pause();
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    hold(on) {
      holding = on;
      for (const [a, b] of pairs) {
        for (const s of [a, b]) {
          if (on) s.pause();
          else s.resume();
        }
      }
    },
    close() {
      for (const [a, b] of pairs) for (const s of [a, b]) s.destroy();
      server.close();
    },
  };
}

describe('/health and /ready', () => {
  let broker: TestBroker;
  let proxy: Awaited<ReturnType<typeof relay>>;
  afterAll(async () => {
    proxy?.hold(false);
    await broker?.stop();
    proxy?.close();
  });

  it('answers alive and ready, then not ready while PostgreSQL does not answer, then ready again', { timeout: 60_000 }, async () => {
    const url = new URL(testDatabaseUrl());
    proxy = await relay(new URL(url));
    url.host = `127.0.0.1:${proxy.port}`;
    broker = await startTestBroker({ databaseUrl: url.toString() });
    const get = async (path: string) => {
      const res = await fetch(`http://127.0.0.1:${broker.metricsPort}${path}`);
      return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
    };
    expect(await get('/health')).toEqual({ status: 200, body: { status: 'alive' } });
    expect(await get('/ready')).toEqual({ status: 200, body: { status: 'ready' } });

    proxy.hold(true);
    expect(await get('/ready')).toEqual({ status: 503, body: { status: 'not ready', reason: 'PostgreSQL did not answer within 2000 ms' } });
    expect(await get('/health')).toEqual({ status: 200, body: { status: 'alive' } });

    proxy.hold(false);
    expect(await within(10_000, async () => (await get('/ready')).status === 200)).toBeGreaterThanOrEqual(0);
  });

  it('is not ready once shutdown has begun', { timeout: 60_000 }, async () => {
    const b = await startTestBroker();
    const port = b.metricsPort;
    const stopping = b.destroy();
    // Shutdown drains the Kafka listener first; the HTTP port answers until the metrics server closes.
    const res = await fetch(`http://127.0.0.1:${port}/ready`).catch(() => null);
    if (res) expect({ status: res.status, body: await res.json() }).toEqual({ status: 503, body: { status: 'not ready', reason: 'shutting down' } });
    await stopping;
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  });
});
