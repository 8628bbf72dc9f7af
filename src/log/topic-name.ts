// Kafka's topic name rules (org.apache.kafka.common.internals.Topic).
const LEGAL = /^[a-zA-Z0-9._-]+$/;
export const MAX_TOPIC_NAME_LENGTH = 249;

/** Why the name is illegal, or null if it is legal. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return "Topic name is illegal, it can't be empty";
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > MAX_TOPIC_NAME_LENGTH) return `Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${name}`;
  if (!LEGAL.test(name)) return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  return null;
}

/** Kafka refuses topics whose names differ only in '.' versus '_' (they collide in metric names). */
export function unifyCollisionChars(name: string): string {
  return name.replace(/\./g, '_');
}
