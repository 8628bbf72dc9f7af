// Kafka's AuthHelper.filterByAuthorized: the names, among those a request
// carries, on which the requester may perform the operation. Each distinct
// name is asked once and each denial logged once, however many times the
// request repeats it.
import { allowed } from './authorization.js';
import type { RequestContext } from './types.js';

export function authorizedNames(ctx: RequestContext, operation: number, resourceType: number, names: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const name of new Set(names)) if (allowed(ctx, operation, resourceType, name)) out.add(name);
  return out;
}
