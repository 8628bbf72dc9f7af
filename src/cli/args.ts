// Flag parsing for every subcommand: `--name value`, `--name=value`, `-n value`,
// `-nvalue`, booleans, repeatable flags and `--` (the rest are positionals).
// Values may start with '-' (`-o -3`), as rpk allows. An unknown flag is a
// UsageError with the closest known spelling.
import { UsageError } from './errors.js';

/** The environment variable naming the brokers the client commands bootstrap from. */
export const BROKERS_ENV = 'PGKAFKA_BROKERS';

export interface FlagSpec {
  short?: string;
  /** Takes no value. */
  boolean?: boolean;
  /** May be given more than once (values collected in order). */
  multiple?: boolean;
  /** Placeholder and one-line description for --help. */
  value?: string;
  doc: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export interface Parsed {
  flags: Map<string, string[]>;
  positionals: string[];
}

/** Flags every command takes. */
export const COMMON_FLAGS: FlagSpecs = {
  brokers: { value: 'host:port,…', doc: `brokers to bootstrap from (env ${BROKERS_ENV}; default: the local broker, localhost:9092)` },
  help: { short: 'h', boolean: true, doc: 'this text' },
};

export function parseFlags(args: readonly string[], specs: FlagSpecs, command: string): Parsed {
  const all = { ...specs, ...COMMON_FLAGS };
  const byShort = new Map(Object.entries(all).flatMap(([name, s]) => (s.short ? [[s.short, name] as const] : [])));
  const flags = new Map<string, string[]>();
  const positionals: string[] = [];
  const set = (name: string, value: string) => {
    const spec = all[name]!;
    const values = flags.get(name) ?? [];
    if (values.length > 0 && !spec.multiple && !spec.boolean) throw new UsageError(`${command}: --${name} given twice`);
    values.push(value);
    flags.set(name, values);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
      if (!(name in all)) throw new UsageError(`${command}: unknown flag --${name}${suggest(name, Object.keys(all), '--')}`);
    } else if (arg.startsWith('-') && arg.length > 1 && !/^-\d/.test(arg)) {
      const short = arg[1]!;
      const long = byShort.get(short);
      if (!long) throw new UsageError(`${command}: unknown flag -${short}; see pgkafka ${command} --help`);
      name = long;
      inline = arg.length > 2 ? arg.slice(2).replace(/^=/, '') : undefined;
    } else {
      positionals.push(arg);
      continue;
    }
    const spec = all[name]!;
    if (spec.boolean) {
      if (inline !== undefined && inline !== 'true' && inline !== 'false') throw new UsageError(`${command}: --${name} takes no value`);
      if (inline !== 'false') set(name, 'true');
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined) throw new UsageError(`${command}: --${name} needs a value`);
    set(name, value);
  }
  return { flags, positionals };
}

export function flag(p: Parsed, name: string): string | undefined {
  return p.flags.get(name)?.at(-1);
}

export function flagList(p: Parsed, name: string): string[] {
  return p.flags.get(name) ?? [];
}

export function has(p: Parsed, name: string): boolean {
  return p.flags.has(name);
}

export function intFlag(p: Parsed, name: string, command: string, min = 0): number | undefined {
  const raw = flag(p, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${command}: --${name} must be an integer ≥ ${min}, not ${raw}`);
  return n;
}

/** The flags' section of a help text. */
export function flagsHelp(specs: FlagSpecs): string {
  const rows = Object.entries({ ...specs, ...COMMON_FLAGS }).map(([name, s]) => [`${s.short ? `-${s.short}, ` : '    '}--${name}${s.value ? ` <${s.value}>` : ''}`, s.doc]);
  const width = Math.max(...rows.map((r) => r[0]!.length));
  return rows.map(([left, doc]) => `  ${left!.padEnd(width)}  ${doc}`).join('\n');
}

/** " (did you mean X?)" for the closest candidate within a small edit distance, else "". */
export function suggest(word: string, candidates: readonly string[], prefix = ''): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.startsWith(word) && word.length >= 2 ? 1 : editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? ` (did you mean ${prefix}${best}?)` : '';
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = row;
  }
  return prev[b.length]!;
}
