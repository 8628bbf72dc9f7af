// The consumer protocol's bytes inside a classic group's JoinGroup
// (protocol type "consumer"): what the coordinator reads from them.
import { Reader } from '../protocol/codec/reader.js';
import { readConsumerProtocolSubscription } from '../protocol/messages/index.js';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';

/**
 * The topics a member's subscription names, or null when the bytes do not
 * decode. Read as Kafka's coordinator reads them: whatever the version, as
 * its version 0 prefix (topics and user data), which every later version
 * begins with; what follows is not read.
 */
export function subscribedTopicsOf(metadata: Buffer): string[] | null {
  if (metadata.length < 2) return null;
  const r = new Reader(metadata, 2);
  const subscription = readConsumerProtocolSubscription(r, 0);
  return r.error ? null : subscription.topics;
}
