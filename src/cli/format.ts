// Output shapes shared by the subcommands: aligned tables as Kafka's tools and
// rpk print them, and JSON where int64 values stay exact.

/** Columns left-aligned, each padded to its widest cell plus one space (two with `gap`); the last one unpadded. */
export function formatTable(rows: readonly (readonly string[])[], gap = 1): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]! + gap))).join('') + '\n').join('');
}

// Offsets are written as JSON numbers of any size (jq and most parsers keep
// int64 exactly): bigints go through a marker string that is unquoted after.
const BIGINT_MARK = '\u0000bigint:';

/** JSON.stringify with bigints as plain numbers; `indent` 0 gives one line. */
export function toJson(value: unknown, indent = 2): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${BIGINT_MARK}${v}` : v), indent || undefined).replace(/"\\u0000bigint:(-?\d+)"/g, '$1');
}
