// Section sessions: what incremental fetch sessions (KIP-227) save a consumer
// of 1,000 partitions with nothing new to read. One connection sends Fetch
// v12 (max_wait 0, so the broker's work per request is what is timed) over
// one topic of 1,000 empty partitions, in turns within each run: sessionless
// full fetches (epoch -1, what every fetch was before sessions, and what
// librdkafka and kafkajs still send) and incremental fetches of one session
// (opened by a full fetch with epoch 0, then epoch 1, 2, … naming no
// partition). Bytes per request and response, and broker CPU per fetch.
import { Broker } from './broker.js';
import { createTopic } from './clients.js';
import { RawClient } from './raw.js';
import { Collector, sleep, type Ctx, type Row } from './stats.js';
import { FetchApi, type FetchRequest } from '../src/protocol/messages/index.js';
import type { Input } from '../src/protocol/codec/types.js';

const PARTITIONS = 1000;

export async function runSessions(ctx: Ctx): Promise<Row[]> {
  const col = new Collector('sessions');
  const turnMs = ctx.quick ? 1500 : 4000;
  const broker = await Broker.start();
  const client = await RawClient.connect('127.0.0.1', broker.port);
  try {
    await createTopic(broker.bootstrap, 'sessions', PARTITIONS);
    const partitions = Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }));
    const fetch = (body: Partial<Input<FetchRequest>>) =>
      client.request(FetchApi, 12, { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 64 << 20, isolationLevel: 0, topics: [], forgottenTopicsData: [], rackId: '', ...body });
    const all = [{ topic: 'sessions', partitions }];

    /** Fetches for turnMs; per fetch: request and response bytes, broker CPU (ms), round trip (ms). */
    const turn = async (next: () => Promise<unknown>) => {
      await sleep(200);
      const cpu0 = broker.sample().cpuSec;
      const t0 = performance.now();
      let n = 0;
      while (performance.now() - t0 < turnMs) {
        await next();
        n++;
      }
      const wallMs = performance.now() - t0;
      const cpuMs = ((broker.sample().cpuSec - cpu0) * 1000) / n;
      return { n, request: client.lastRequestBytes, response: client.lastResponseBytes, cpuMs, rttMs: wallMs / n };
    };

    for (let run = 0; run < ctx.runs; run++) {
      const full = await turn(() => fetch({ sessionId: 0, sessionEpoch: -1, topics: all }));
      const opened = await fetch({ sessionId: 0, sessionEpoch: 0, topics: all });
      if (opened.sessionId === 0) throw new Error('the broker opened no fetch session');
      let epoch = 0;
      const incremental = await turn(async () => {
        const res = await fetch({ sessionId: opened.sessionId, sessionEpoch: ++epoch });
        if (res.errorCode !== 0 || res.responses.length !== 0) throw new Error(`incremental fetch answered error ${res.errorCode}, ${res.responses.length} topics`);
      });
      ctx.log(
        `  run ${run + 1}: full ${full.request} B → ${full.response} B, ${full.cpuMs.toFixed(2)} ms CPU, ${full.rttMs.toFixed(2)} ms (${full.n} fetches); ` +
          `incremental ${incremental.request} B → ${incremental.response} B, ${incremental.cpuMs.toFixed(2)} ms CPU, ${incremental.rttMs.toFixed(2)} ms (${incremental.n})`,
      );
      for (const [label, r] of [
        ['sessionless full fetch', full],
        ['incremental fetch', incremental],
      ] as const) {
        const ratio = label === 'incremental fetch' ? { ratio: r.cpuMs / full.cpuMs } : {};
        col.add(`${label}: request`, 'bytes', r.request);
        col.add(`${label}: response`, 'bytes', r.response);
        col.add(`${label}: broker CPU per fetch`, 'ms', r.cpuMs, { ...ratio, note: `${PARTITIONS} idle partitions, max_wait 0` });
        col.add(`${label}: round trip`, 'ms', r.rttMs, label === 'incremental fetch' ? { ratio: r.rttMs / full.rttMs } : {});
      }
    }
  } finally {
    client.close();
    broker.sample();
    ctx.peakRssKiB.value = Math.max(ctx.peakRssKiB.value, broker.peakHwmKiB);
    await broker.stop();
  }
  return col.list();
}
