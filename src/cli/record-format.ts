// How records are written by `consume` and read by `produce`: JSON lines
// (bytes that are not UTF-8 as base64, flagged, so any value round-trips),
// rpk-style templates (%t %p %o %k %v %d %h, \n \t escapes) and raw bytes.
import { UsageError } from './errors.js';
import { toJson } from './format.js';

export interface OutRecord {
  topic: string;
  partition: number;
  offset: bigint;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A field as a JSON value: the UTF-8 text, or base64 when the bytes are not UTF-8 (`encoding` says which). */
function jsonBytes(b: Buffer | null): { text: string | null; base64: boolean } {
  if (b === null) return { text: null, base64: false };
  try {
    return { text: utf8.decode(b), base64: false };
  } catch {
    return { text: b.toString('base64'), base64: true };
  }
}

/** One JSON line: topic, partition, offset, timestamp, key, value, headers (+ keyEncoding/valueEncoding "base64" where used). */
export function recordJson(r: OutRecord): string {
  const key = jsonBytes(r.key);
  const value = jsonBytes(r.value);
  return toJson(
    {
      topic: r.topic,
      partition: r.partition,
      offset: r.offset,
      timestamp: r.timestamp,
      key: key.text,
      ...(key.base64 ? { keyEncoding: 'base64' } : {}),
      value: value.text,
      ...(value.base64 ? { valueEncoding: 'base64' } : {}),
      headers: r.headers.map((h) => {
        const v = jsonBytes(h.value);
        return { key: h.key, value: v.text, ...(v.base64 ? { valueEncoding: 'base64' } : {}) };
      }),
    },
    0,
  );
}

/** The bytes a template (`%v\n`, `%k=%v\n`, …) makes of a record. */
export function recordTemplate(template: string, r: OutRecord): Buffer {
  const parts: Buffer[] = [];
  let text = '';
  const flush = () => {
    if (text) parts.push(Buffer.from(text));
    text = '';
  };
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    const next = template[i + 1];
    if (c === '\\' && next !== undefined) {
      text += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : next;
      i++;
    } else if (c === '%' && next !== undefined) {
      i++;
      if (next === 'k' || next === 'v') {
        flush();
        const b = next === 'k' ? r.key : r.value;
        if (b) parts.push(b);
      } else if (next === 't') text += r.topic;
      else if (next === 'p') text += String(r.partition);
      else if (next === 'o') text += String(r.offset);
      else if (next === 'd') text += String(r.timestamp);
      else if (next === 'h') text += r.headers.map((h) => `${h.key}:${h.value?.toString() ?? ''}`).join(',');
      else if (next === '%') text += '%';
      else throw new UsageError(`unknown format directive %${next} (use %t %p %o %k %v %d %h)`);
    } else text += c;
  }
  flush();
  return Buffer.concat(parts);
}

/** The consume output format's writer: text (value and a newline), json, raw (value bytes only) or a template. */
export function recordWriter(format: string): (r: OutRecord) => Buffer | string {
  if (format === 'json') return (r) => `${recordJson(r)}\n`;
  if (format === 'text') return (r) => recordTemplate('%v\\n', r);
  if (format === 'raw') return (r) => r.value ?? Buffer.alloc(0);
  if (!format.includes('%')) throw new UsageError(`consume: --format must be text, json, raw or a template such as '%k %v\\n', not ${format}`);
  return (r) => recordTemplate(format, r);
}

export interface InRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  partition?: number;
}

function fromJsonField(v: unknown, encoding: unknown, what: string): Buffer | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new UsageError(`produce: ${what} must be a string or null`);
  return Buffer.from(v, encoding === 'base64' ? 'base64' : 'utf8');
}

/** One JSON input line, in consume -f json's shape (topic, offset and timestamp ignored). */
export function parseJsonRecord(line: string): InRecord {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch (e) {
    throw new UsageError(`produce: not a JSON object: ${(e as Error).message}`);
  }
  if (typeof o !== 'object' || o === null) throw new UsageError('produce: each line must be a JSON object');
  const headers = Array.isArray(o.headers) ? (o.headers as Record<string, unknown>[]) : [];
  return {
    key: fromJsonField(o.key, o.keyEncoding, 'key'),
    value: fromJsonField(o.value, o.valueEncoding, 'value'),
    headers: headers.map((h) => ({ key: String(h.key), value: fromJsonField(h.value, h.valueEncoding, 'header value') })),
    ...(typeof o.partition === 'number' ? { partition: o.partition } : {}),
  };
}
