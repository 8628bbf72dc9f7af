// Reads the broker's Prometheus histograms (pgkafka_request_duration_seconds,
// pgkafka_produce_commit_duration_seconds) so a section can say how much of a
// latency was the broker's and how much PostgreSQL's commit, for what it ran
// between two scrapes.

/** Cumulative bucket counts of one histogram series: [upper bound in seconds, count], ascending. */
export type Buckets = [number, number][];

export async function scrapeMetrics(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}

/** The buckets of `metric`, restricted to series whose labels include `labels` (e.g. `api="Produce"`). */
export function histogramBuckets(body: string, metric: string, labels = ''): Buckets {
  const out: Buckets = [];
  for (const line of body.split('\n')) {
    if (!line.startsWith(`${metric}_bucket{`)) continue;
    const close = line.indexOf('}');
    const labelText = line.slice(metric.length + 8, close);
    if (labels && !labelText.split(',').includes(labels)) continue;
    const le = /le="([^"]+)"/.exec(labelText)?.[1];
    if (le === undefined) continue;
    out.push([le === '+Inf' ? Infinity : Number(le), Number(line.slice(close + 2))]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** What was observed between two scrapes: `after` minus `before`, bucket by bucket. */
export function bucketsBetween(before: Buckets, after: Buckets): Buckets {
  const earlier = new Map(before);
  return after.map(([le, n]) => [le, n - (earlier.get(le) ?? 0)]);
}

/** Prometheus' histogram_quantile: linear within the bucket holding the q-quantile, in milliseconds. */
export function quantileMs(buckets: Buckets, q: number): number {
  const total = buckets.at(-1)?.[1] ?? 0;
  if (total === 0) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, n] of buckets) {
    if (n >= rank) {
      if (le === Infinity) return lower * 1000;
      return (lower + (le - lower) * ((rank - below) / Math.max(n - below, 1))) * 1000;
    }
    lower = le;
    below = n;
  }
  return NaN;
}

/** The share (0..1) of observations above `seconds`, which must be a bucket bound. */
export function shareAbove(buckets: Buckets, seconds: number): number {
  const total = buckets.at(-1)?.[1] ?? 0;
  const within = buckets.find(([le]) => le === seconds)?.[1];
  if (total === 0 || within === undefined) return NaN;
  return (total - within) / total;
}
