// Conditions on `version`. A condition is true (always), false (never) or an
// expression string, simplified against the context range it is evaluated in.
import { type Range, intersect } from './spec.js';

export type Cond = true | false | string;

export function cond(r: Range | null, ctx: Range): Cond {
  const i = intersect(r, ctx);
  if (i === null) return false;
  const parts: string[] = [];
  if (i.min > ctx.min) parts.push(`version >= ${i.min}`);
  if (i.max < ctx.max) parts.push(`version <= ${i.max}`);
  if (parts.length === 0) return true;
  return parts.join(' && ');
}

export function choose(c: Cond, a: string, b: string): string {
  if (c === true) return a;
  if (c === false) return b;
  if (a === b) return a;
  return `(${c} ? ${a} : ${b})`;
}

/** Statements: if (c) { a } else { b }. */
export function chooseStmts(c: Cond, a: string[], b: string[]): string[] {
  if (c === true) return a;
  if (c === false) return b;
  if (a.join('\n') === b.join('\n')) return a;
  const out = [`if (${c}) {`, ...indent(a)];
  if (b.length > 0) out.push('} else {', ...indent(b));
  out.push('}');
  return out;
}

export function guard(c: Cond, body: string[]): string[] {
  if (c === false || body.length === 0) return [];
  if (c === true) return body;
  if (body.length === 1 && !body[0]!.startsWith('if ')) return [`if (${c}) ${body[0]}`];
  return [`if (${c}) {`, ...indent(body), '}'];
}

export function indent(lines: string[], n = 1): string[] {
  const pad = '  '.repeat(n);
  return lines.map((l) => (l === '' ? l : pad + l));
}
