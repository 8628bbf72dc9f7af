// The broker's embedded PostgreSQL killed (SIGKILL to its postmaster): the
// broker starts it again by itself, every error a producer sees on the way is
// retriable or a closed connection, and what was acknowledged before is kept.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, errorName, isRetriable } from '../../src/protocol/errors.js';
import { InitProducerIdApi, ProduceApi } from '../../src/protocol/messages/index.js';
import { buildBatch } from '../../src/protocol/records/index.js';
import { freePort, spawnBroker } from '../support/broker-process.js';
import { readLog } from '../support/durability.js';
import { RawClient } from '../support/raw-client.js';
import { sleep, within } from '../support/wait.js';

describe('PostgreSQL restart', () => {
  it('starts its embedded PostgreSQL again when that server is killed, and serves again', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgkafka-embedded-kill-'));
    // As root, the embedded server runs as "postgres", which must be able to enter the directory.
    chmodSync(dir, 0o755);
    const postmasterPid = () => {
      try {
        return Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
      } catch {
        return null;
      }
    };
    const env = { DATABASE_URL: '', PGKAFKA_DATA_DIR: dir, PGKAFKA_PORT: String(await freePort()), PGKAFKA_EMBEDDED_PG_PORT: String(await freePort()) };
    const bootstrap = `127.0.0.1:${env.PGKAFKA_PORT}`;
    const broker = await spawnBroker(env);
    const client = await RawClient.connect(bootstrap);
    try {
      const init = await client.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
      expect(init.errorCode).toBe(0);
      const produce = (c: RawClient, sequence: number, value: string) =>
        c
          .request(ProduceApi, 9, {
            acks: -1,
            timeoutMs: 5000,
            topicData: [
              {
                name: 'kept',
                partitionData: [
                  { index: 0, records: buildBatch({ producerId: init.producerId, producerEpoch: init.producerEpoch, baseSequence: sequence, records: [{ key: null, value: Buffer.from(value) }] }) },
                ],
              },
            ],
          })
          .then((r) => r.responses[0]!.partitionResponses[0]!.errorCode);
      expect(await produce(client, 0, 'before')).toBe(0);
      const pid = postmasterPid();
      expect(pid).toBeGreaterThan(0);
      process.kill(pid!, 'SIGKILL');
      const killedAt = Date.now();
      // Backends outlive their postmaster for a moment (and may still commit): wait for the restart itself.
      const restartedMs = await within(30_000, () => broker.output().includes('embedded PostgreSQL started again'));
      expect(restartedMs).toBeGreaterThanOrEqual(0);
      // The same batch is retried until acknowledged: every answer on the way is a retriable error or a closed connection.
      const seen: string[] = [];
      let acked = false;
      let c: RawClient | null = client;
      while (!acked && Date.now() - killedAt < 30_000) {
        try {
          if (!c || c.closed) c = await RawClient.connect(bootstrap);
          const code = await produce(c, 1, 'after');
          if (code === 0 || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) acked = true;
          else seen.push(errorName(code));
        } catch (err) {
          seen.push((err as Error).message);
          c?.close();
          c = null;
        }
        if (!acked) await sleep(100);
      }
      const recoveredMs = Date.now() - killedAt;
      c?.close();
      process.stdout.write(
        `embedded PostgreSQL SIGKILLed: started again ${restartedMs} ms later, produce acknowledged ${recoveredMs} ms after the kill; errors seen: ${JSON.stringify([...new Set(seen)])}\n`,
      );
      expect(acked).toBe(true);
      expect(seen.filter((e) => !(/closed|ECONNREFUSED|ECONNRESET/.test(e) || isRetriable(ErrorCode[e as keyof typeof ErrorCode] ?? -1)))).toEqual([]);
      expect(broker.output()).not.toMatch(/uncaught exception|unhandled rejection/);
      expect((await readLog(bootstrap, 'kept')).map((r) => r.value)).toEqual(['before', 'after']);
      broker.child.kill('SIGTERM');
      expect(await broker.exited).toBe(0);
    } finally {
      client.close();
      if (broker.child.exitCode === null && broker.child.signalCode === null) {
        broker.child.kill('SIGTERM');
        await Promise.race([broker.exited, sleep(15_000)]);
      }
      // Never leave the broker's PostgreSQL running behind a failed test.
      const left = postmasterPid();
      if (left) {
        try {
          process.kill(left, 'SIGQUIT');
        } catch {
          /* already gone */
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
