// Section 6 (scale): 10,000 partitions (100 topics × 100) created through
// CreateTopics; Metadata latency for all topics; produce and fetch on a sample;
// broker RSS. Then 1,000 concurrent TCP connections each doing ApiVersions +
// Metadata and staying open: broker RSS and memory per idle connection.
import { ApiVersionsApi, MetadataApi } from '../src/protocol/messages/index.js';
import { Broker } from './broker.js';
import { kafkajs, produceRdkafka } from './clients.js';
import { fetchPartition, RawClient } from './raw.js';
import { Collector, median, sleep, type Ctx, type Row } from './stats.js';

export async function runScale(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('scale');
  const topicsN = ctx.quick ? 10 : 100;
  const perTopic = 100;
  const connsN = ctx.quick ? 200 : 1000;
  for (let run = 0; run < ctx.runs; run++) {
    const broker = await Broker.start();
    try {
      await sleep(500);
      const rss0 = broker.sample().rssKiB;
      const topics = Array.from({ length: topicsN }, (_, i) => `scale-${i}`);
      const admin = kafkajs(broker.bootstrap).admin();
      await admin.connect();
      let t0 = performance.now();
      try {
        await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: perTopic })), timeout: 300_000 });
      } finally {
        await admin.disconnect();
      }
      const createSec = (performance.now() - t0) / 1000;

      // Metadata for all topics, 5 times on one connection
      const raw = await RawClient.connect('127.0.0.1', broker.port);
      const mdLat: number[] = [];
      let parts = 0;
      for (let i = 0; i < 5; i++) {
        t0 = performance.now();
        const md = await raw.request(MetadataApi, 9, { topics: topics.map((name) => ({ name })), allowAutoTopicCreation: false }, 60_000);
        mdLat.push(performance.now() - t0);
        parts = md.topics.reduce((n, t) => n + (t.errorCode === 0 ? t.partitions.length : 0), 0);
      }
      ctx.log(`  run ${run + 1}: created ${topicsN}×${perTopic} partitions in ${createSec.toFixed(1)} s; Metadata (${parts} partitions) median ${median(mdLat).toFixed(0)} ms`);

      // produce to and fetch from a sample of partitions
      let okFetch = 0;
      const prodT0 = performance.now();
      const sampleTopic = topics[topicsN - 1]!;
      const pr = await produceRdkafka(broker.bootstrap, sampleTopic, perTopic, 10_000, Buffer.alloc(100, 0x66), 60_000);
      const prodSec = (performance.now() - prodT0) / 1000;
      for (let i = 0; i < 10; i++) {
        const f = await fetchPartition(raw, sampleTopic, i * 11, 0n);
        if (f.errorCode === 0 && f.records === 100) okFetch++;
      }
      raw.close();
      const afterTopics = broker.sample();
      ctx.log(
        `    sample produce 10k records over ${perTopic} partitions: ${pr.errors} errors${pr.firstError ? ` (${pr.firstError})` : ''}, ${prodSec.toFixed(2)} s; fetch checks ok ${okFetch}; RSS ${(afterTopics.rssKiB / 1024).toFixed(0)} MiB`,
      );

      // idle connections
      await sleep(1000);
      const rssBefore = broker.sample().rssKiB;
      const conns: RawClient[] = [];
      t0 = performance.now();
      let connErrors = 0;
      for (let i = 0; i < connsN; i += 100) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(100, connsN - i) }, async () => {
            try {
              const c = await RawClient.connect('127.0.0.1', broker.port);
              await c.request(ApiVersionsApi, 3, { clientSoftwareName: 'pgkafka-bench', clientSoftwareVersion: '1.0' });
              await c.request(MetadataApi, 9, { topics: [{ name: sampleTopic }], allowAutoTopicCreation: false });
              return c;
            } catch {
              connErrors++;
              return null;
            }
          }),
        );
        for (const c of batch) if (c) conns.push(c);
      }
      const connSec = (performance.now() - t0) / 1000;
      await sleep(2000);
      const rssConns = broker.sample().rssKiB;
      const perConnKiB = (rssConns - rssBefore) / conns.length;
      ctx.log(
        `    ${conns.length} connections (${connErrors} failed) in ${connSec.toFixed(1)} s; RSS ${(rssBefore / 1024).toFixed(0)} → ${(rssConns / 1024).toFixed(0)} MiB, ${perConnKiB.toFixed(1)} KiB/connection`,
      );
      for (const c of conns) c.close();

      col.add(`create ${topicsN}×${perTopic} partitions (CreateTopics)`, 's', createSec);
      col.add(`Metadata, all ${topicsN * perTopic} partitions`, 'ms', median(mdLat), { note: `${parts} partitions answered` });
      col.add('sample: produce 10k records over 100 partitions (librdkafka)', 'records/s', 10_000 / prodSec, pr.errors ? { note: `${pr.errors} errors` } : {});
      col.add('sample: fetches answering all 100 records (of 10)', 'ok', okFetch);
      col.add('broker RSS before topics', 'MiB', rss0 / 1024);
      col.add(`broker RSS with ${topicsN * perTopic} partitions`, 'MiB', afterTopics.rssKiB / 1024);
      col.add(`broker RSS with ${conns.length} idle connections`, 'MiB', rssConns / 1024, connErrors ? { note: `${connErrors} connections failed` } : {});
      col.add('memory per idle connection', 'KiB', perConnKiB);
      col.add('broker peak RSS (VmHWM)', 'MiB', broker.sample().hwmKiB / 1024);
    } finally {
      broker.sample();
      ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
      if (broker.logTail) ctx.log(`  broker warnings: ${broker.logTail.slice(-1500)}`);
      await broker.stop();
    }
  }
  col.judge('broker peak RSS (VmHWM)', 'MiB', '< 512 MiB', (m) => m < 512);
  col.judge('memory per idle connection', 'KiB', '< 64 KiB', (m) => m < 64);
  return col.list();
}
