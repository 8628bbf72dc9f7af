// kcat (librdkafka 2.0.2) as a producer and as a group-less reader. Records go
// in on stdin split by 0x1e (-D) with the key before 0x1f (-K); they come out
// through a -f format that prints lengths before the raw key and value bytes,
// so binary payloads (NUL, newline, invalid UTF-8) survive exactly.
import type { Header, ReadRec, Rec } from './records.js';
import { runOk, type RunResult } from './spawn.js';

export const KCAT = 'kcat';
const REC = 0x1e;
const KEY = 0x1f;

export function kcat(bootstrap: string, args: string[], input?: Buffer | string, timeoutMs = 20_000): Promise<RunResult> {
  // -m bounds metadata waits; -q hides the "Reached end" chatter on stderr.
  return runOk(KCAT, ['-b', bootstrap, '-m', '10', ...args], { input, timeoutMs });
}

/**
 * Produces records to their partitions, in order. kcat applies -H to every
 * message of one run and can send a null value only with -Z (which turns every
 * empty message into null), so each partition is sent as runs of non-null /
 * null values, each run with one header set (the first record's headers).
 */
export async function kcatProduce(bootstrap: string, topic: string, recs: Rec[], opts: { codec?: string; extra?: string[] } = {}): Promise<void> {
  const runs: Rec[][] = [];
  for (const r of recs) {
    const last = runs.at(-1);
    const same = last && last[0]!.partition === r.partition && (last[0]!.value === null) === (r.value === null) && sameHeaders(last[0]!.headers, r.headers);
    if (same) last.push(r);
    else runs.push([r]);
  }
  for (const run of runs) {
    const input = Buffer.concat(run.flatMap((r) => [r.key ?? Buffer.alloc(0), Buffer.from([KEY]), r.value ?? Buffer.alloc(0), Buffer.from([REC])]));
    const args = ['-P', '-t', topic, '-p', String(run[0]!.partition), '-D', '\\x1e', '-K', '\\x1f', '-X', 'linger.ms=50', '-X', 'acks=all'];
    for (const [k, v] of run[0]!.headers) args.push('-H', `${k}=${v.toString('utf8')}`);
    if (opts.codec && opts.codec !== 'none') args.push('-z', opts.codec);
    if (run[0]!.value === null) args.push('-Z');
    await kcat(bootstrap, [...args, ...(opts.extra ?? [])], input);
  }
}

const sameHeaders = (a: Header[], b: Header[]) => a.length === b.length && a.every(([k, v], i) => k === b[i]![0] && v.equals(b[i]![1]));

/** Format: partition, offset, key length, value length, headers (n=v CSV), then raw key and value bytes. */
export const KCAT_FORMAT = '%p\\x1f%o\\x1f%K\\x1f%S\\x1f%h\\x1f%k%s\\x1e';

/** Parses KCAT_FORMAT output. Headers are text (kcat prints them as n=v,n=v). */
export function parseKcatFormat(out: Buffer): ReadRec[] {
  const recs: ReadRec[] = [];
  let at = 0;
  const field = () => {
    const end = out.indexOf(KEY, at);
    if (end < 0) throw new Error(`kcat output truncated at byte ${at}`);
    const s = out.subarray(at, end).toString('utf8');
    at = end + 1;
    return s;
  };
  while (at < out.length) {
    const partition = Number(field());
    const offset = Number(field());
    const keyLen = Number(field());
    const valueLen = Number(field());
    const headerText = field();
    const key = keyLen < 0 ? null : Buffer.from(out.subarray(at, at + keyLen));
    at += Math.max(keyLen, 0);
    const value = valueLen < 0 ? null : Buffer.from(out.subarray(at, at + valueLen));
    at += Math.max(valueLen, 0);
    if (out[at] !== REC) throw new Error(`kcat output: record separator missing at byte ${at}`);
    at += 1;
    const headers: [string, Buffer | null][] =
      headerText === ''
        ? []
        : headerText.split(',').map((kv) => {
            const eq = kv.indexOf('=');
            return [kv.slice(0, eq), Buffer.from(kv.slice(eq + 1))];
          });
    recs.push({ partition, offset, key, value, headers });
  }
  return recs;
}

/** Reads partitions from `offset` (beginning, a number, -N from end) to the end, with no consumer group. */
export async function kcatConsume(bootstrap: string, topic: string, opts: { partition?: number; offset?: string; extra?: string[] } = {}): Promise<ReadRec[]> {
  const args = ['-C', '-t', topic, '-o', opts.offset ?? 'beginning', '-e', '-q', '-f', KCAT_FORMAT];
  if (opts.partition !== undefined) args.push('-p', String(opts.partition));
  const r = await kcat(bootstrap, [...args, ...(opts.extra ?? [])]);
  return parseKcatFormat(r.stdout);
}
