// The CommonJS entry (`require('pgkafka')`): the broker is ES modules, and
// startBroker is asynchronous anyway, so it loads the ESM build on first call.
import type { Broker, StartBrokerOptions } from './index.js' with { 'resolution-mode': 'import' };

export type { Broker, StartBrokerOptions, Config, OptionName } from './index.js' with { 'resolution-mode': 'import' };

export async function startBroker(options?: StartBrokerOptions): Promise<Broker> {
  const api = await import('./index.js');
  return api.startBroker(options);
}
