// Listeners as Kafka writes them: "PLAINTEXT://0.0.0.0:9092,SASL_SSL://:9093".
// A listener's name is its security protocol (so at most one of each); an
// empty host binds every interface. Advertised listeners use the same syntax
// and name the host and port clients are told to use for each listener.
// Config parses them at start-up, so they live with the config (below the
// security code that serves them).

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';

export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

/** The SASL mechanisms the broker serves (Kafka's `sasl.enabled.mechanisms` takes a list of these). */
export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface ListenerSpec {
  name: SecurityProtocol;
  host: string;
  port: number;
}

export class ListenerSyntaxError extends Error {}

/** Parses a comma-separated listener list; throws ListenerSyntaxError naming the bad entry. */
export function parseListeners(spec: string): ListenerSpec[] {
  const out: ListenerSpec[] = [];
  for (const entry of spec
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const m = /^([A-Z_]+):\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]*):(\d{1,5})$/.exec(entry);
    if (!m) throw new ListenerSyntaxError(`listener "${entry}" is not NAME://host:port`);
    const name = m[1] as SecurityProtocol;
    if (!SECURITY_PROTOCOLS.includes(name)) throw new ListenerSyntaxError(`listener "${entry}": the name must be one of ${SECURITY_PROTOCOLS.join(', ')}`);
    const port = Number(m[3]);
    if (port > 65535) throw new ListenerSyntaxError(`listener "${entry}": port above 65535`);
    if (out.some((l) => l.name === name)) throw new ListenerSyntaxError(`listener ${name} is named twice`);
    out.push({ name, host: m[2]!.replace(/^\[(.*)\]$/, '$1'), port });
  }
  return out;
}

/** A zod refinement message for a listener list, or null if it parses (`allowEmpty`: the empty string means the default). */
export function listenersError(spec: string): string | null {
  try {
    parseListeners(spec);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
