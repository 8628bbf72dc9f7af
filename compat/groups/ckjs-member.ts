// One @confluentinc/kafka-javascript (librdkafka 2.15.1) group member in this
// process: the node-rdkafka-style KafkaConsumer, polled with consume(n, cb)
// (each call holds a libuv pool thread for at most the consume timeout, so
// dozens of members share the 4 pool threads), commit after processing with
// commit() + offset_commit_cb (no *Sync call: this thread also runs the broker).
// Same requests and events as groups_driver.py consume.
import ck from '@confluentinc/kafka-javascript';
import { EventLog, type Member, type MemberRequest } from './support.js';

type Msg = ck.Message;
const ASSIGN = -175;
const REVOKE = -174;

export class CkMember extends EventLog implements Member {
  readonly consumer: ck.KafkaConsumer;
  private running = true;
  private loop: Promise<void> | undefined;
  private readonly owned = new Set<number>();
  private readonly positioned = new Set<number>();
  private awaitingReady = false;
  private processed = 0;
  private seeked = false;
  private pending = new Map<number, number>();

  constructor(
    private readonly req: MemberRequest,
    private readonly produce: (topic: string, recs: [string, string][]) => Promise<void>,
  ) {
    super();
    const conf: ck.ConsumerGlobalConfig = {
      'bootstrap.servers': req.bootstrap,
      'group.id': req.group,
      'client.id': req.name ?? 'ckjs-member',
      'enable.auto.commit': false,
      'session.timeout.ms': req.session_ms ?? 6000,
      'heartbeat.interval.ms': req.heartbeat_ms ?? 500,
      'max.poll.interval.ms': req.max_poll_ms ?? 30_000,
      'enable.partition.eof': true,
      'topic.metadata.refresh.interval.ms': 2000,
      rebalance_cb: true,
      offset_commit_cb: true,
    };
    if (req.instance_id) conf['group.instance.id'] = req.instance_id;
    if (req.strategy) conf['partition.assignment.strategy'] = req.strategy;
    this.consumer = new ck.KafkaConsumer(conf, { 'auto.offset.reset': req.reset ?? 'earliest' });
    this.consumer.on('rebalance', (err: ck.LibrdKafkaError, assignment: ck.Assignment[]) => {
      const parts = assignment.map((a) => a.partition).sort((a, b) => a - b);
      const cooperative = req.strategy === 'cooperative-sticky';
      if (err.code === ASSIGN) {
        if (!cooperative) this.owned.clear();
        for (const p of parts) {
          this.owned.add(p);
          this.positioned.delete(p);
        }
        this.awaitingReady = this.owned.size > 0;
        this.push({ ev: 'assign', partitions: parts, owned: [...this.owned].sort((a, b) => a - b) });
      } else if (err.code === REVOKE) {
        for (const p of parts) this.owned.delete(p);
        this.push({ ev: 'revoke', partitions: parts, owned: [...this.owned].sort((a, b) => a - b) });
      }
    });
    this.consumer.on('offset.commit', (err: unknown, offsets: ck.TopicPartitionOffset[]) => {
      if (err) this.push({ ev: 'error', error: String(err) });
      else this.push({ ev: 'commit', offsets: offsets.map((o) => [o.partition, o.offset]).sort((a, b) => a[0]! - b[0]!) });
    });
    this.consumer.on('partition.eof', (e: { partition: number }) => this.positioned.add(e.partition));
  }

  private started: Promise<unknown> | undefined;

  /** Starts polling in the background (errors become an 'error' event). */
  begin(): this {
    this.started = this.start().catch((e: unknown) => this.push({ ev: 'error', error: String(e) }));
    return this;
  }

  async start(): Promise<this> {
    await new Promise<void>((res, rej) => this.consumer.connect({ timeout: 10_000 }, (e) => (e ? rej(e) : res())));
    this.consumer.setDefaultConsumeTimeout(50);
    this.consumer.subscribe([this.req.topic]);
    const deadline = Date.now() + (this.req.max_s ?? 25) * 1000;
    this.loop = (async () => {
      while (this.running && Date.now() < deadline) {
        const msgs = await new Promise<Msg[]>((res) => this.consumer.consume(10, (e, m) => res(e ? [] : m)));
        for (const m of msgs) if (!(await this.process(m))) return;
        await this.checkReady();
        if (this.req.seek_zero_after !== undefined && !this.seeked && this.processed >= this.req.seek_zero_after) {
          this.seeked = true;
          for (const p of this.owned) {
            await new Promise<void>((res, rej) => this.consumer.seek({ topic: this.req.topic, partition: p, offset: 0 }, 5000, (e) => (e ? rej(e) : res())));
          }
          this.push({ ev: 'seeked', partitions: [...this.owned] });
        }
      }
    })();
    return this;
  }

  private async checkReady() {
    if (!this.awaitingReady || ![...this.owned].every((p) => this.positioned.has(p))) return;
    this.awaitingReady = false;
    this.push({ ev: 'ready', partitions: [...this.owned] });
    if (this.req.produce_when_ready) {
      const recs = this.req.produce_when_ready;
      this.req.produce_when_ready = undefined;
      await this.produce(this.req.topic, recs);
      this.push({ ev: 'produced', n: recs.length });
    }
  }

  /** false: stop polling (stalled). */
  private async process(m: Msg): Promise<boolean> {
    this.positioned.add(m.partition);
    if (this.req.process_ms) await new Promise((r) => setTimeout(r, this.req.process_ms));
    this.processed += 1;
    this.push({ ev: 'msg', p: m.partition, o: m.offset, k: m.key === null || m.key === undefined ? null : m.key.toString() });
    this.pending.set(m.partition, m.offset + 1);
    if (this.req.commit_every && this.processed % this.req.commit_every === 0) {
      const offsets = [...this.pending].sort((a, b) => a[0] - b[0]);
      this.pending.clear();
      // commitSync would block this thread, which also runs the broker: commit() sends at once, and the
      // 'commit' event comes from offset_commit_cb (served by a later consume() call).
      this.consumer.commit(offsets.map(([partition, offset]) => ({ topic: this.req.topic, partition, offset })));
    }
    if (this.req.stall_after !== undefined && this.processed === this.req.stall_after) {
      this.push({ ev: 'stall' }); // no more consume() calls: max.poll.interval.ms runs out
      return false;
    }
    return true;
  }

  async stop() {
    if (this.done) return;
    this.running = false;
    const bounded = (p: Promise<unknown> | undefined, what: string) => Promise.race([p, new Promise((r) => setTimeout(() => r(this.push({ ev: 'error', error: `${what} took over 10 s` })), 10_000))]);
    await bounded(this.started, 'start');
    await bounded(this.loop, 'the poll loop');
    await bounded(new Promise<void>((res) => this.consumer.disconnect(() => res())), 'disconnect');
    this.done = true;
    this.push({ ev: 'done', processed: this.processed });
  }

  /** In-process there is no SIGKILL: a kill is a clean stop. */
  kill() {
    return this.stop();
  }
}
