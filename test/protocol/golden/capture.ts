// Captures golden request bytes from real Kafka clients, and golden response
// bytes from librdkafka's built-in mock broker. Not part of the test run;
// rerun by hand when the set of golden files should change:
//
//   npx tsx test/protocol/golden/capture.ts
//
// Requests: a throwaway broker on a free loopback port (answering with the
// generated codecs, just enough for each client to go on) logs the first
// frame of every (API, version) each client sends. Clients: kcat (librdkafka),
// kafkajs 2.2.4 (in process) and kafka-python (/usr/bin/python3).
// Responses: confluent-kafka-python starts a librdkafka mock cluster; its
// listening port is found with `ss`, and requests are sent to it.
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Reader } from '../../../src/protocol/codec/reader.js';
import { Writer } from '../../../src/protocol/codec/writer.js';
import { apiByKey } from '../../../src/protocol/messages/index.js';
import { readRequestHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader } from '../../../src/protocol/messages/request-header.js';
import { readResponseHeader, writeResponseHeader } from '../../../src/protocol/messages/response-header.js';

const OUT = import.meta.dirname;
const run = promisify(execFile);

function kebab(s: string): string {
  return s.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

/** Formats a frame (without its size prefix) as a commented .hex file. */
export function hexFile(comments: string[], bytes: Buffer): string {
  const lines = comments.map((c) => `# ${c}`);
  for (let i = 0; i < bytes.length; i += 16) {
    const chunk = bytes.subarray(i, i + 16).toString('hex');
    lines.push(chunk.replace(/(..)(?!$)/g, '$1 '));
  }
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------------------
// Throwaway broker

const ADVERTISED: [number, number, number][] = [
  [0, 0, 7], // Produce
  [1, 4, 11], // Fetch
  [2, 1, 3], // ListOffsets
  [3, 0, 12], // Metadata
  [18, 0, 3], // ApiVersions
];

interface Captured {
  client: string;
  file: string;
}

function respond(sock: net.Socket, apiKey: number, version: number, correlationId: number, body: Record<string, unknown>): void {
  const api = apiByKey.get(apiKey)!;
  const w = new Writer();
  const size = w.reserveInt32();
  writeResponseHeader(w, responseHeaderVersion(apiKey, version), { correlationId });
  api.writeResponse(w, version, body);
  w.patchInt32(size, w.length - 4);
  sock.write(w.toBuffer());
}

function startBroker(clientOf: (clientId: string | null) => string, seen: Set<string>, captured: Captured[]): Promise<net.Server> {
  const server = net.createServer((sock) => {
    let pending = Buffer.alloc(0);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 4) {
        const n = pending.readInt32BE(0);
        if (pending.length < 4 + n) break;
        const frame = pending.subarray(4, 4 + n);
        pending = pending.subarray(4 + n);
        handle(sock, Buffer.from(frame));
      }
    });
  });
  const port = () => (server.address() as net.AddressInfo).port;
  const handle = (sock: net.Socket, frame: Buffer) => {
    const apiKey = frame.readInt16BE(0);
    const version = frame.readInt16BE(2);
    const api = apiByKey.get(apiKey);
    const hv = requestHeaderVersion(apiKey, version);
    const r = new Reader(frame);
    const h = readRequestHeader(r, hv);
    const client = clientOf(h.clientId);
    const name = api?.name ?? `api${apiKey}`;
    const key = `${client}/${apiKey}/${version}`;
    if (!seen.has(key)) {
      seen.add(key);
      const file = `${client}-${kebab(name)}-v${version}-request.hex`;
      writeFileSync(
        join(OUT, file),
        hexFile(
          [
            `client: ${CLIENT_DESC[client] ?? client} (client id ${JSON.stringify(h.clientId)})`,
            `api: ${name} (key ${apiKey}) request v${version}, request header v${hv}`,
            `direction: request`,
            `api-key: ${apiKey}`,
            `api-version: ${version}`,
            `header-version: ${hv}`,
            'bytes: the frame after its int32 size prefix (header + body)',
          ],
          frame,
        ),
      );
      captured.push({ client, file });
    }
    if (!api) return;
    const req = api.readRequest(r, version) as Record<string, any>;
    const cid = h.correlationId;
    switch (apiKey) {
      case 18:
        respond(sock, 18, version, cid, {
          errorCode: 0,
          apiKeys: ADVERTISED.map(([k, min, max]) => ({ apiKey: k, minVersion: min, maxVersion: max })),
        });
        break;
      case 3: {
        const names: string[] = (req.topics ?? []).map((t: { name: string | null }) => t.name ?? 'golden');
        respond(sock, 3, version, cid, {
          brokers: [{ nodeId: 0, host: '127.0.0.1', port: port(), rack: null }],
          clusterId: 'golden-cluster',
          controllerId: 0,
          topics: (names.length > 0 ? names : ['golden']).map((name) => ({
            errorCode: 0,
            name,
            partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 0, leaderEpoch: 0, replicaNodes: [0], isrNodes: [0], offlineReplicas: [] }],
          })),
        });
        break;
      }
      case 0:
        if (req.acks !== 0) {
          respond(sock, 0, version, cid, {
            responses: req.topicData.map((t: { name: string; partitionData: { index: number }[] }) => ({
              name: t.name,
              partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode: 0, baseOffset: 0n, logAppendTimeMs: -1n, logStartOffset: 0n })),
            })),
          });
        }
        break;
      default:
        sock.destroy();
    }
  };
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const CLIENT_DESC: Record<string, string> = {
  librdkafka: 'kcat 1.7 with librdkafka 2.0.2',
  kafkajs: 'kafkajs 2.2.4',
  'kafka-python': 'kafka-python 2.0.2',
  'librdkafka-mock': 'librdkafka 2.0.2 mock broker (via confluent-kafka-python 1.7.0)',
};

async function captureRequests(): Promise<Captured[]> {
  const seen = new Set<string>();
  const captured: Captured[] = [];
  let current = 'unknown';
  const server = await startBroker(() => current, seen, captured);
  const port = (server.address() as net.AddressInfo).port;
  const bootstrap = `127.0.0.1:${port}`;
  console.log(`capture broker on ${bootstrap}`);

  current = 'librdkafka';
  await run('kcat', ['-b', bootstrap, '-L', '-m', '5']).catch((e) => console.warn('kcat -L:', e.message));
  await run('sh', ['-c', `echo golden-value | kcat -b ${bootstrap} -P -t golden -p 0 -X linger.ms=0 -m 5`]).catch((e) => console.warn('kcat -P:', e.message));

  current = 'kafkajs';
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'kafkajs-golden', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  try {
    await producer.connect();
    await producer.send({
      topic: 'golden',
      acks: -1,
      messages: [{ key: 'k', value: 'golden-value', timestamp: '1700000000000', headers: { h: 'v' } }],
    });
  } catch (e) {
    console.warn('kafkajs:', (e as Error).message);
  } finally {
    await producer.disconnect().catch(() => {});
  }

  current = 'kafka-python';
  const py = [
    'import kafka',
    `p = kafka.KafkaProducer(bootstrap_servers='${bootstrap}', client_id='kafka-python-golden', request_timeout_ms=5000, max_block_ms=5000)`,
    "p.send('golden', b'golden-value', timestamp_ms=1700000000000).get(timeout=5)",
    'p.close()',
  ].join('\n');
  await run('/usr/bin/python3', ['-c', py]).catch((e) => console.warn('kafka-python:', e.message));

  server.close();
  return captured;
}

// ---------------------------------------------------------------------------
// Responses from the librdkafka mock broker

async function findListeningPorts(pid: number): Promise<number[]> {
  const { stdout } = await run('ss', ['-ltnpH']);
  const ports: number[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.includes(`pid=${pid},`)) continue;
    const m = /127\.0\.0\.1:(\d+)|\*:(\d+)|0\.0\.0\.0:(\d+)/.exec(line);
    if (m) ports.push(Number(m[1] ?? m[2] ?? m[3]));
  }
  return ports;
}

function exchange(port: number, frames: Buffer[]): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const out: Buffer[] = [];
    let pending = Buffer.alloc(0);
    let i = 0;
    const next = () => {
      if (i >= frames.length) {
        sock.end();
        resolve(out);
        return;
      }
      sock.write(frames[i++]!);
    };
    sock.on('connect', next);
    sock.on('error', reject);
    sock.on('data', (d) => {
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const n = pending.readInt32BE(0);
        out.push(Buffer.from(pending.subarray(4, 4 + n)));
        pending = pending.subarray(4 + n);
        next();
      }
    });
    setTimeout(() => reject(new Error('mock broker timeout')), 5000).unref();
  });
}

function requestFrame(apiKey: number, version: number, correlationId: number, body: Record<string, unknown>): Buffer {
  const w = new Writer();
  const size = w.reserveInt32();
  writeRequestHeader(w, requestHeaderVersion(apiKey, version), { requestApiKey: apiKey, requestApiVersion: version, correlationId, clientId: 'pgkafka-golden' });
  apiByKey.get(apiKey)!.writeRequest(w, version, body);
  w.patchInt32(size, w.length - 4);
  return w.toBuffer();
}

async function captureMockResponses(): Promise<string[]> {
  const py = [
    'import confluent_kafka, sys, time',
    "p = confluent_kafka.Producer({'bootstrap.servers': 'dummy', 'test.mock.num.brokers': 1})",
    "p.produce('golden', b'golden-value', partition=0)",
    'p.flush(5)',
    "print('ready', flush=True)",
    'time.sleep(30)',
  ].join('\n');
  const child = spawn('/usr/bin/python3', ['-c', py], { stdio: ['ignore', 'pipe', 'inherit'] });
  const files: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child.on('exit', () => reject(new Error('python exited')));
      setTimeout(() => reject(new Error('mock start timeout')), 10000).unref();
    });
    const ports = await findListeningPorts(child.pid!);
    if (ports.length === 0) throw new Error('mock broker port not found');
    const port = ports[0]!;
    console.log(`librdkafka mock broker on 127.0.0.1:${port}`);
    // Versions within what the 2.0.2 mock supports. (Its answer to ApiVersions v3,
    // which it does not support, is not valid in any version, and its ListOffsets
    // v5 answer carries 4 stray trailing bytes, so neither is kept.)
    const plan: [number, number, Record<string, unknown>][] = [
      [18, 2, {}],
      [3, 2, { topics: [{ name: 'golden' }] }],
      [10, 2, { key: 'golden-group', keyType: 0 }],
      [22, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 }],
    ];
    const responses: Buffer[] = [];
    for (const [i, [k, v, b]] of plan.entries()) {
      responses.push(...(await exchange(port, [requestFrame(k, v, 100 + i, b)])));
    }
    responses.forEach((resp, i) => {
      const [apiKey, version] = plan[i]!;
      const name = apiByKey.get(apiKey)!.name;
      const hv = responseHeaderVersion(apiKey, version);
      const file = `librdkafka-mock-${kebab(name)}-v${version}-response.hex`;
      const h = readResponseHeader(new Reader(resp), hv);
      writeFileSync(
        join(OUT, file),
        hexFile(
          [
            `client: ${CLIENT_DESC['librdkafka-mock']}, answering a request written by pgkafka's codecs`,
            `api: ${name} (key ${apiKey}) response v${version}, response header v${hv}, correlation id ${h.correlationId}`,
            'direction: response',
            `api-key: ${apiKey}`,
            `api-version: ${version}`,
            `header-version: ${hv}`,
            'bytes: the frame after its int32 size prefix (header + body)',
          ],
          resp,
        ),
      );
      files.push(file);
    });
  } finally {
    child.kill();
  }
  return files;
}

const captured = await captureRequests();
for (const c of captured) console.log(`wrote ${c.file}`);
try {
  for (const f of await captureMockResponses()) console.log(`wrote ${f}`);
} catch (e) {
  console.warn('mock responses skipped:', (e as Error).message);
}
