// The Python clients from PyPI (compat/python/requirements.txt) live in a
// virtual environment the project makes (.ci/run, or by hand:
// `/usr/bin/python3 -m venv .cache/pyvenv && .cache/pyvenv/bin/pip install -r compat/python/requirements.txt`).
// The Debian clients keep /usr/bin/python3 (spawn.ts PYTHON); the venv does
// not see Debian's site-packages, so each process has one version of each client.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { expectRecords, fromJson, type JsonRead, type Rec } from './records.js';
import { runOk, type RunResult } from './spawn.js';

export const VENV_PYTHON = fileURLToPath(new URL('../../.cache/pyvenv/bin/python', import.meta.url));

const script = (name: string) => fileURLToPath(new URL(`../python/${name}`, import.meta.url));

function venvPython(): string {
  if (!existsSync(VENV_PYTHON)) throw new Error(`no Python venv at ${VENV_PYTHON}: run .ci/run, or make it as compat/support/python.ts says`);
  return VENV_PYTHON;
}

/** Runs compat/python/`name` with the venv's python and `args`; fails unless it exits 0 in time. */
export function runVenvScript(name: string, args: string[], timeoutMs = 30_000): Promise<RunResult> {
  return runOk(venvPython(), [script(name), ...args], { timeoutMs });
}

/** Like spawn.ts runPythonJson (JSON request on stdin, JSON answer on stdout), with the venv's python. */
export async function runVenvPythonJson<T>(name: string, command: string, request: unknown, timeoutMs = 30_000): Promise<T> {
  const r = await runOk(venvPython(), [script(name), command], { input: JSON.stringify(request), timeoutMs });
  return JSON.parse(r.stdout.toString('utf8')) as T;
}

/**
 * The bound on a PyPI client's two-member group scenario (its Python process
 * is killed past it, with its output): the members join, rebalance and commit,
 * which on two busy cores can take most of a minute. The test's own timeout
 * is 10 s longer, so the process's output is what a failure shows.
 */
export const GROUP_RUN_MS = 60_000;

/** What every PyPI runner's `group` command reports: member A alone, then A and B after B joins. */
export interface TwoMemberGroupRun {
  a_alone: { assigned: number[]; records: JsonRead[] };
  committed_before_b: number[];
  after_join: { a: number[]; b: number[] };
  after: { a: JsonRead[]; b: JsonRead[] };
  committed: number[];
}

/**
 * The two-member group scenario on a 3-partition topic: `first` (5 records a partition) was produced before A
 * joined, `second` after B joined.
 */
export function expectTwoMemberGroupRun(res: TwoMemberGroupRun, first: Rec[], second: Rec[]): void {
  // Alone, member A holds every partition, reads everything and commits it.
  expect(res.a_alone.assigned).toEqual([0, 1, 2]);
  expectRecords(fromJson(res.a_alone.records), first);
  expect(res.committed_before_b).toEqual([5, 5, 5]);
  // B joins: the partitions are split between the two.
  const { a, b } = res.after_join;
  expect(a.length).toBeGreaterThan(0);
  expect(b.length).toBeGreaterThan(0);
  expect([...a, ...b].sort()).toEqual([0, 1, 2]);
  // Each member reads the new records of its own partitions only, from the committed offsets on.
  expect(res.after.a.every((r) => a.includes(r.partition))).toBe(true);
  expect(res.after.b.every((r) => b.includes(r.partition))).toBe(true);
  expectRecords(
    fromJson([...res.after.a, ...res.after.b]).map((r) => ({ ...r, offset: r.offset - 5 })),
    second,
  );
  expect(res.committed).toEqual([10, 10, 10]);
}
