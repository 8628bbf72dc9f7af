// The consumer protocol's subscription bytes that a JoinGroup carries, as
// Kafka's consumers write them (version 0: the topic list).
import { Writer } from '../../src/protocol/codec/writer.js';
import { writeConsumerProtocolSubscription } from '../../src/protocol/messages/index.js';

export function subscription(topics: string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  writeConsumerProtocolSubscription(w, 0, { topics });
  return w.toBuffer();
}
