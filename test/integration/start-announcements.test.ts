// A broker starting while the other brokers of its schema announce (slots
// handed over, partitions released, topics created), and stopped as soon as
// it listens. Two faults were found this way: an announcement arriving
// while the broker was still subscribing reached a handler not defined yet
// (the process never finished starting), and a SIGTERM sent right after
// 'listening' was lost while the start-up handler was swapped for the
// shutdown one (the process ran on).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freePort, spawnBroker } from '../support/broker-process.js';
import { scratchSchema, testDatabaseUrl } from '../support/broker.js';

const schema = scratchSchema();

describe('start-up under announcements', () => {
  it('starts, and stops at a SIGTERM sent the moment it listens, while the coordinators and topics channels are busy', { timeout: 120_000 }, async () => {
    const announcer = new pg.Client({ connectionString: testDatabaseUrl() });
    await announcer.connect();
    let announcing = true;
    let sent = 0;
    const announce = (async () => {
      while (announcing) {
        await announcer.query(`NOTIFY "${schema}_coordinators", ''; NOTIFY "${schema}_topics", ''`);
        sent++;
        // A busy cluster's pace (brokers joining, slots and partitions handed over), not a flood.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      // Each start is a fresh race; several make both windows likely to be hit.
      for (let i = 0; i < 6; i++) {
        const broker = await spawnBroker({ DATABASE_URL: testDatabaseUrl(), PGKAFKA_SCHEMA: schema, PGKAFKA_NODE_ID: String(i + 1), PGKAFKA_PORT: String(await freePort()) });
        broker.child.kill('SIGTERM');
        const stopped = await Promise.race([broker.exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 15_000))]);
        if (stopped === 'running') broker.child.kill('SIGKILL');
        expect(stopped).toBe(0);
        expect(broker.output()).toContain('shutting down');
        expect(broker.output()).not.toContain('uncaught exception');
      }
      expect(sent).toBeGreaterThan(0);
    } finally {
      announcing = false;
      await announce;
      await announcer.end();
    }
  });
});
