import type pg from 'pg';

// The NOTIFYs that carry transactions-version-2 adds between brokers
// (coordinator/txn-add-requests.ts): a request to the transaction's
// coordinator, its answer to the asking broker. Each is a transaction of its
// own that writes nothing; synchronous_commit is off for it, so its commit
// (a NOTIFY takes a transaction id) does not wait for a WAL flush: the
// coordinator stored what matters before it answers, and a lost message is
// answered by the asker's timeout.
const NOTIFY_SQL = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)`;

export class TxnAddChannel {
  constructor(
    private readonly pool: pg.Pool,
    readonly channel: string,
  ) {}

  async send(payload: string): Promise<void> {
    await this.pool.query({ name: 'pgkafka_txn_add_notify', text: NOTIFY_SQL, values: [this.channel, payload] });
  }
}
