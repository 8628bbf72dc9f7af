// Regular-expression subscriptions of a KIP-848 consumer group, as Kafka's
// GroupMetadataManager.maybeUpdateRegularExpressions, TopicRegexResolver and
// ConsumerGroup's resolvedRegularExpressions: a member subscribes with an
// RE2/J pattern (SubscribedTopicRegex); the group resolves all its patterns
// together, off the heartbeat, against every topic name, keeping the topics
// the member whose heartbeat asked may describe; a changed result bumps the
// group epoch so the next heartbeat computes a new target assignment. Kafka
// validates and matches with com.google.re2j; re2js is a port of RE2/J, so
// the same patterns are refused with the same descriptions.
import { RE2JS, RE2JSSyntaxException } from 're2js';

/** Kafka's REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: the group's patterns are resolved at most this often. */
export const REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000;

/** A pattern's topics as last resolved (Kafka's ResolvedRegularExpression). */
export interface ResolvedRegularExpression {
  topics: ReadonlySet<string>;
  /** The topic list's version it was resolved against (TopicManager.version; -1 after a restore). */
  version: number;
  /** When it was resolved (the group's clock). */
  timestamp: number;
}

/** Kafka's throwIfRegularExpressionIsInvalid: the error message for a pattern RE2/J refuses, or null. */
export function regexError(regex: string): string | null {
  try {
    RE2JS.compile(regex);
    return null;
  } catch (err) {
    if (err instanceof RE2JSSyntaxException) return `SubscribedTopicRegex \`${regex}\` is not a valid regular expression: ${err.getDescription()}.`;
    throw err;
  }
}

/**
 * Kafka's TopicRegexResolver.resolveRegularExpressions: every pattern's
 * matching topic names (the whole name must match), less those `describable`
 * leaves out. A pattern that no longer compiles matches nothing.
 */
export function resolveRegularExpressions(
  regexes: Iterable<string>,
  topicNames: readonly string[],
  describable: (names: string[]) => Set<string>,
  version: number,
  timestamp: number,
): Map<string, ResolvedRegularExpression> {
  const matched = new Map<string, Set<string>>();
  for (const regex of regexes) {
    const topics = new Set<string>();
    matched.set(regex, topics);
    let pattern: RE2JS;
    try {
      pattern = RE2JS.compile(regex);
    } catch {
      continue;
    }
    for (const name of topicNames) if (pattern.matches(name)) topics.add(name);
  }
  const allowed = describable([...new Set([...matched.values()].flatMap((t) => [...t]))]);
  return new Map([...matched].map(([regex, topics]) => [regex, { topics: new Set([...topics].filter((t) => allowed.has(t))), version, timestamp }]));
}

const sameTopics = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((t) => b.has(t));

/** What a member's change of pattern means for the group (Kafka's UpdateRegularExpressionStatus). */
export type RegexUpdate = 'none' | 'updated' | 'updated_and_resolved';

/**
 * One group's patterns: those resolved, and whether a resolution is running.
 * The members' patterns are the group's (counted from them on demand).
 */
export class GroupRegularExpressions {
  readonly resolved = new Map<string, ResolvedRegularExpression>();
  private refreshing = false;

  constructor(private readonly subscribers: (regex: string) => number) {}

  /** The topics a member's pattern resolves to now (none while unresolved: Kafka's conservative choice). */
  topicsOf(regex: string | null): ReadonlySet<string> {
    return (regex ? this.resolved.get(regex)?.topics : undefined) ?? new Set();
  }

  /** Every resolved topic of the group's patterns. */
  allTopics(): Set<string> {
    const names = new Set<string>();
    for (const r of this.resolved.values()) for (const t of r.topics) names.add(t);
    return names;
  }

  /**
   * A member changes its pattern (Kafka's maybeUpdateRegularExpressions,
   * before the member is updated in the group): the old pattern's resolution
   * goes with its last subscriber; a pattern new to the group must compile
   * (the error message, else null); a pattern already resolved rebalances at
   * once.
   */
  memberChanges(oldRegex: string | null, newRegex: string | null): { update: RegexUpdate; invalid: string | null } {
    if ((oldRegex ?? '') === (newRegex ?? '')) return { update: 'none', invalid: null };
    const isNew = !!newRegex && this.subscribers(newRegex) === 0;
    const invalid = isNew ? regexError(newRegex) : null;
    if (invalid !== null) return { update: 'updated', invalid };
    if (oldRegex && this.subscribers(oldRegex) === 1) this.resolved.delete(oldRegex);
    if (newRegex) return { update: !isNew && this.resolved.has(newRegex) ? 'updated_and_resolved' : 'updated', invalid: null };
    return { update: oldRegex ? 'updated_and_resolved' : 'updated', invalid: null };
  }

  /** A member left: its pattern's resolution goes with its last subscriber (Kafka's maybeDeleteResolvedRegularExpressions). */
  memberLeft(regex: string | null): void {
    if (regex && this.subscribers(regex) === 0) this.resolved.delete(regex);
  }

  /**
   * The patterns to resolve now, or null (Kafka's refresh conditions): the
   * group has patterns, none is being resolved, the last resolution is older
   * than REGEX_BATCH_REFRESH_MIN_INTERVAL_MS, and a pattern is unresolved,
   * or topics changed since, or the last one is older than
   * group.consumer.regex.refresh.interval.ms.
   */
  due(patterns: ReadonlySet<string>, now: number, topicsVersion: number, refreshIntervalMs: number): string[] | null {
    if (patterns.size === 0 || this.refreshing) return null;
    const first = this.resolved.values().next();
    const lastRefresh = first.done ? Number.NEGATIVE_INFINITY : first.value.timestamp;
    const lastVersion = first.done ? Number.NEGATIVE_INFINITY : first.value.version;
    if (now <= lastRefresh + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS) return null;
    const required = patterns.size !== this.resolved.size || [...patterns].some((p) => !this.resolved.has(p)) || lastVersion < topicsVersion || now > lastRefresh + refreshIntervalMs;
    return required ? [...patterns] : null;
  }

  startRefresh(): void {
    this.refreshing = true;
  }

  endRefresh(): void {
    this.refreshing = false;
  }

  /**
   * A resolution's result (Kafka's handleRegularExpressionsResult): patterns
   * the group still has take their new topics. True when a pattern's topics
   * changed.
   */
  apply(results: ReadonlyMap<string, ResolvedRegularExpression>): boolean {
    let changed = false;
    for (const [regex, result] of results) {
      if (this.subscribers(regex) === 0) continue;
      // An unresolved pattern counts as matching nothing.
      if (!sameTopics(this.resolved.get(regex)?.topics ?? new Set(), result.topics)) changed = true;
      this.resolved.set(regex, result);
    }
    return changed;
  }
}
