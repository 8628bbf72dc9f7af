// Small statistics helpers shared by every section.

export function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Percentile by nearest rank (p in 0..100) of already-sorted values. */
export function percentileSorted(s: readonly number[], p: number): number {
  if (s.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))]!;
}

export function percentile(values: readonly number[], p: number): number {
  return percentileSorted(sorted(values), p);
}

export function median(values: readonly number[]): number {
  const s = sorted(values.filter((v) => Number.isFinite(v)));
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function min(values: readonly number[]): number {
  const f = values.filter((v) => Number.isFinite(v));
  return f.length ? Math.min(...f) : NaN;
}

export function max(values: readonly number[]): number {
  const f = values.filter((v) => Number.isFinite(v));
  return f.length ? Math.max(...f) : NaN;
}

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: readonly number[]): Summary {
  return { median: median(values), min: min(values), max: max(values), n: values.length };
}

/** One line of the result table. `values` holds one figure per run; `ratios` one ratio per run (pair-wise). */
export interface Row {
  section: string;
  case: string;
  unit: string;
  values: number[];
  ratios?: number[];
  /** What the ratio is relative to, e.g. "of SQL limit". */
  ratioOf?: string;
  /** Human-readable target, e.g. "≥0.8× limit". */
  target?: string;
  /** Decided from the medians by the section. */
  pass?: boolean;
  note?: string;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Rejects if `p` has not settled within `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(t)),
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
    }),
  ]);
}

export function fmt(n: number): string {
  if (!Number.isFinite(n)) return '-';
  const a = Math.abs(n);
  if (a >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  if (a >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

/** Gathers one figure (and optionally one ratio) per run for each table row, in first-seen order. */
export class Collector {
  private readonly rows = new Map<string, Row>();

  constructor(readonly section: string) {}

  add(kase: string, unit: string, value: number, extra: Partial<Omit<Row, 'section' | 'case' | 'unit' | 'values'>> & { ratio?: number } = {}): Row {
    const key = `${kase}|${unit}`;
    let row = this.rows.get(key);
    if (!row) {
      row = { section: this.section, case: kase, unit, values: [] };
      this.rows.set(key, row);
    }
    row.values.push(value);
    const { ratio, ...rest } = extra;
    if (ratio !== undefined) (row.ratios ??= []).push(ratio);
    Object.assign(row, rest);
    return row;
  }

  /** Rows whose figure (or ratio, if `onRatio`) median passes `test` get pass=true, others false. */
  judge(kase: string, unit: string, target: string, test: (median: number) => boolean, onRatio = false): void {
    const row = this.rows.get(`${kase}|${unit}`);
    if (!row) return;
    row.target = target;
    row.pass = test(median(onRatio ? (row.ratios ?? []) : row.values));
  }

  get(kase: string, unit: string): Row | undefined {
    return this.rows.get(`${kase}|${unit}`);
  }

  list(): Row[] {
    return [...this.rows.values()];
  }
}

export interface Ctx {
  quick: boolean;
  runs: number;
  log: (msg: string) => void;
  /** Largest broker VmHWM seen by any section, KiB. */
  peakRssKiB: { value: number };
}
