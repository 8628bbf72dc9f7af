// Differential: malformed and unsupported requests — what a real Apache Kafka
// answers and what it closes the connection on — against pgkafka. Each case is
// sent on a fresh connection; the outcome is the first answer's correlation id
// and error code (or that the connection closed), then whether the same
// connection still answers an ApiVersions request.
import { describe, it } from 'vitest';
import { Reader } from '../../src/protocol/codec/reader.js';
import { ApiVersionsApi, readApiVersionsResponse, readResponseHeader } from '../../src/protocol/messages/index.js';
import type { RawClient } from '../../test/support/raw-client.js';
import { expectSame, onBoth, usePair } from '../support/differential.js';

const pair = usePair();

/** A request frame: size, api key, version, correlation id 7, client id, body. */
function frame(apiKey: number, apiVersion: number, body: Buffer, clientId: string | null = 'differential'): Buffer {
  const id = clientId === null ? Buffer.from([0xff, 0xff]) : Buffer.concat([Buffer.from([0, clientId.length]), Buffer.from(clientId)]);
  const header = Buffer.alloc(8);
  header.writeInt16BE(apiKey, 0);
  header.writeInt16BE(apiVersion, 2);
  header.writeInt32BE(7, 4);
  const size = Buffer.alloc(4);
  size.writeInt32BE(header.length + id.length + body.length);
  return Buffer.concat([size, header, id, body]);
}

/** What the client sees: an answer (its correlation id and, for ApiVersions, its error code) or a closed connection. */
async function outcomeOf(c: RawClient, bytes: Buffer, apiVersionsAnswer = false) {
  const answer = c.nextFrame();
  c.write(bytes);
  const timeout = new Promise<'no answer'>((r) => setTimeout(() => r('no answer'), 3000));
  const got = await Promise.race([answer, timeout]);
  if (got === 'no answer') return { answered: false, closed: c.closed };
  if (got === null) return { answered: false, closed: true };
  const r = new Reader(got);
  const correlationId = readResponseHeader(r, 0).correlationId;
  if (!apiVersionsAnswer) return { answered: true, correlationId };
  const res = readApiVersionsResponse(r, 0);
  return { answered: true, correlationId, errorCode: res.errorCode, listsApiVersions: res.apiKeys.some((k) => k.apiKey === 18) };
}

async function stillServes(c: RawClient): Promise<boolean> {
  if (c.closed) return false;
  try {
    const res = await Promise.race([c.request(ApiVersionsApi, 3, { clientSoftwareName: 'x', clientSoftwareVersion: '1' }), new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
    return res !== null && res.errorCode === 0;
  } catch {
    return false;
  }
}

const CASES: Record<string, { bytes: Buffer; apiVersions?: boolean }> = {
  // A newer client's ApiVersions: a flexible (v2) header, so an empty tagged-field section follows the client id.
  'ApiVersions at version 99 (KIP-511)': { bytes: frame(18, 99, Buffer.from([0x00])), apiVersions: true },
  'ApiVersions at version 99 with a null client id': { bytes: frame(18, 99, Buffer.from([0x00]), null), apiVersions: true },
  'ApiVersions at version 99 without the tagged fields of its header': { bytes: frame(18, 99, Buffer.alloc(0)), apiVersions: true },
  'ApiVersions at version 99, null client id, no tagged fields': { bytes: frame(18, 99, Buffer.alloc(0), null), apiVersions: true },
  'an unknown API key': { bytes: frame(999, 0, Buffer.alloc(0)) },
  'Metadata at version 99': { bytes: frame(3, 99, Buffer.alloc(0)) },
  'a truncated Metadata body': { bytes: frame(3, 12, Buffer.from([0x05, 0x02])) },
  'a controller-only API (Vote)': { bytes: frame(52, 0, Buffer.alloc(0)) },
  'a negative frame size': { bytes: Buffer.from([0xff, 0xff, 0xff, 0xf0, 0, 18, 0, 3]) },
  'a frame larger than socket.request.max.bytes': { bytes: Buffer.concat([Buffer.from([0x7f, 0xff, 0xff, 0xff]), Buffer.alloc(16)]) },
  'an ApiVersions v3 body cut in the client software name': { bytes: frame(18, 3, Buffer.from([0x00, 0x09, 0x61])), apiVersions: true },
};

describe('differential: malformed requests', () => {
  for (const [name, { bytes, apiVersions }] of Object.entries(CASES)) {
    it(name, async () => {
      const outcome = await onBoth(pair(), async (connect) => {
        const c = await connect();
        const first = await outcomeOf(c, bytes, apiVersions);
        return { first, connectionStillServes: await stillServes(c) };
      });
      expectSame(outcome);
    });
  }
});
