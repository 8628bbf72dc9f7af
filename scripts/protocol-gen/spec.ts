// The spec model: Kafka's JSON message definitions as read, and their version ranges.

export interface FieldSpec {
  name: string;
  type: string;
  versions: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  default?: string | number | boolean;
  flexibleVersions?: string;
  fields?: FieldSpec[];
}

export interface MessageSpec {
  apiKey?: number;
  type: 'request' | 'response' | 'header' | 'data';
  name: string;
  validVersions: string;
  flexibleVersions?: string;
  latestVersionUnstable?: boolean;
  /** Set by the union with 3.9.1 (merge.ts): the 4.x definition's own validVersions. */
  kafka4ValidVersions?: string;
  fields?: FieldSpec[];
  commonStructs?: { name: string; versions: string; fields: FieldSpec[] }[];
}

/** Inclusive version range; max may be Infinity. */
export interface Range {
  min: number;
  max: number;
}

export function parseRange(s: string | undefined): Range | null {
  if (s === undefined || s === 'none' || s === '') return null;
  let m = /^(\d+)\+$/.exec(s);
  if (m) return { min: Number(m[1]), max: Infinity };
  m = /^(\d+)-(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[2]) };
  m = /^(\d+)$/.exec(s);
  if (m) return { min: Number(m[1]), max: Number(m[1]) };
  throw new Error(`bad version range ${JSON.stringify(s)}`);
}

export function intersect(a: Range | null, b: Range | null): Range | null {
  if (a === null || b === null) return null;
  const min = Math.max(a.min, b.min);
  const max = Math.min(a.max, b.max);
  return min <= max ? { min, max } : null;
}

/** Strips whole-line // comments (and any // outside strings). */
export function stripComments(text: string): string {
  let out = '';
  let inStr = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inStr) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inStr = false;
    } else if (c === '"') {
      inStr = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else out += c;
  }
  return out;
}
