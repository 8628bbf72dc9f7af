// The consumer protocol's bytes inside a classic group's JoinGroup
// (protocol type "consumer"): what the coordinator reads from them.
import { Reader } from '../protocol/codec/reader.js';
import { ConsumerProtocolSubscriptionVersions, readConsumerProtocolSubscription } from '../protocol/messages/index.js';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';

/** The topics a member's subscription names, or null when the bytes do not decode. */
export function subscribedTopicsOf(metadata: Buffer): string[] | null {
  if (metadata.length < 2) return null;
  const r = new Reader(metadata, 2);
  const subscription = readConsumerProtocolSubscription(r, Math.min(metadata.readInt16BE(0), ConsumerProtocolSubscriptionVersions.max));
  return r.error ? null : subscription.topics;
}
