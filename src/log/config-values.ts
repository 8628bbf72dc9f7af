// What topic and broker configs share: DescribeConfigs' enums, Kafka's
// ConfigDef parsing (same types, canonical text and error messages), Java's
// way of printing doubles, and the request-level checks of AlterConfigs and
// IncrementalAlterConfigs.

import { ErrorCode } from '../protocol/errors.js';

/** DescribeConfigs' ConfigSource values. */
export const ConfigSource = { TOPIC_CONFIG: 1, DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5, GROUP_CONFIG: 8 } as const;
/** DescribeConfigs' ConfigType values (v3+); 0 is UNKNOWN. */
export const ConfigTypeId = { boolean: 1, string: 2, int: 3, short: 4, long: 5, double: 6, list: 7, class: 8, password: 9 } as const;
/** IncrementalAlterConfigs operations. */
export const AlterConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
/** DescribeConfigs/AlterConfigs resource types pgkafka serves. */
export const ConfigResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, GROUP: 32 } as const;

export type ConfigType = keyof typeof ConfigTypeId;
export type Parsed = boolean | string | bigint | number | string[];

export interface Synonym {
  name: string;
  value: string | null;
  source: number;
}
export interface DescribedConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  source: number;
  isSensitive: boolean;
  synonyms: Synonym[];
  configType: number;
  documentation: string | null;
}
export interface DescribeOptions {
  names: string[] | null;
  includeSynonyms: boolean;
  includeDocumentation: boolean;
}

/** A validator's verdict: null, Kafka's reason, or the reason and the element it names (list validators). */
export type Check = (v: Parsed) => string | { why: string; shown: string } | null;

export interface ValueDef {
  name: string;
  type: ConfigType;
  check?: Check;
}

export const LONG_MAX = '9223372036854775807';
export const atLeast = (min: number) => (v: Parsed) => (Number(v) < min ? `Value must be at least ${min}` : null);
export const between = (min: number, max: number) => (v: Parsed) => (Number(v) < min ? `Value must be at least ${min}` : Number(v) > max ? `Value must be no more than ${max}` : null);
export const oneOf =
  (...values: string[]) =>
  (v: Parsed) =>
    values.includes(v as string) ? null : `String must be one of: ${values.join(', ')}`;
/** ValidList.in: each element one of the values; the message names the first bad element. */
export const eachOneOf =
  (...values: string[]) =>
  (v: Parsed) => {
    const bad = (v as string[]).find((s) => !values.includes(s));
    return bad === undefined ? null : { why: `String must be one of: ${values.join(', ')}`, shown: bad };
  };

/** Java's Double.toString, for values Kafka prints (0.5, 1.0, 1.0E-4). */
export function javaDouble(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? 'Infinity' : '-Infinity';
  const abs = Math.abs(x);
  if (abs === 0 || (abs >= 1e-3 && abs < 1e7)) return Number.isInteger(x) ? x.toFixed(1) : String(x);
  const [mantissa, exponent] = x.toExponential().split('e');
  return `${mantissa!.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

const RANGES = { short: [-(2n ** 15n), 2n ** 15n - 1n], int: [-(2n ** 31n), 2n ** 31n - 1n], long: [-(2n ** 63n), 2n ** 63n - 1n] } as const;

export type ParseResult = { value: Parsed; text: string } | { error: string };

/** ConfigDef.parseType followed by the config's validator: the parsed value and its canonical text, or Kafka's message. */
export function parseConfigValue(def: ValueDef, raw: string): ParseResult {
  const invalid = (shown: string, why: string) => ({ error: `Invalid value ${shown} for configuration ${def.name}: ${why}` });
  const trimmed = raw.trim();
  let value: Parsed;
  let text: string;
  let shown: string; // how Java prints the parsed value in a validator's message
  switch (def.type) {
    case 'boolean':
      if (!/^(true|false)$/i.test(trimmed)) return invalid(raw, 'Expected value to be either true or false');
      value = trimmed.toLowerCase() === 'true';
      text = shown = String(value);
      break;
    case 'string':
    case 'class':
      value = text = shown = trimmed;
      break;
    case 'password':
      value = text = shown = raw;
      break;
    case 'short':
    case 'int':
    case 'long': {
      const [min, max] = RANGES[def.type];
      const n = /^[+-]?\d+$/.test(trimmed) ? BigInt(trimmed) : null;
      if (n === null || n < min || n > max) return invalid(raw, `Not a number of type ${def.type.toUpperCase()}`);
      value = n;
      text = shown = n.toString();
      break;
    }
    case 'double': {
      if (!/^[+-]?(Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)$/.test(trimmed)) return invalid(raw, 'Not a number of type DOUBLE');
      value = Number(trimmed.replace(/[fFdD]$/, ''));
      text = shown = javaDouble(value);
      break;
    }
    case 'list':
      value = trimmed === '' ? [] : trimmed.split(/\s*,\s*/);
      text = value.join(',');
      shown = `[${value.join(', ')}]`;
      break;
  }
  const verdict = def.check?.(value) ?? null;
  if (verdict !== null) return typeof verdict === 'string' ? invalid(shown, verdict) : invalid(verdict.shown, verdict.why);
  return { value, text };
}

/** The canonical text of a value that parses, else the value as given. */
export function canonical(def: ValueDef, raw: string): string {
  const p = parseConfigValue(def, raw);
  return 'error' in p ? raw : p.text;
}

/** A set of config names as Kafka 4's (Java) messages print one: `[a, b]`. */
export function javaSet(names: string[]): string {
  return `[${names.join(', ')}]`;
}

/**
 * Kafka's first checks on one resource of AlterConfigs/IncrementalAlterConfigs
 * (INVALID_REQUEST): duplicate config names, null values (allowed only for
 * DELETE). The message, or null.
 */
export function alterResourceError(configs: { name: string; value: string | null; configOperation?: number }[]): string | null {
  if (new Set(configs.map((c) => c.name)).size !== configs.length) return 'Error due to duplicate config keys';
  const nulls = configs.filter((c) => c.value === null && c.configOperation !== AlterConfigOp.DELETE).map((c) => c.name);
  return nulls.length > 0 ? `Null value not supported for : ${nulls.join(', ')}` : null;
}

/**
 * The request-level error of each resource of an AlterConfigs or
 * IncrementalAlterConfigs request: a resource named twice, or
 * alterResourceError. One entry per resource, null when it is well formed.
 */
export function alterRequestErrors(resources: { resourceType: number; resourceName: string; configs: { name: string; value: string | null; configOperation?: number }[] }[]): (string | null)[] {
  const key = (r: { resourceType: number; resourceName: string }) => `${r.resourceType}:${r.resourceName}`;
  const seen = new Map<string, number>();
  for (const r of resources) seen.set(key(r), (seen.get(key(r)) ?? 0) + 1);
  return resources.map((r) => (seen.get(key(r))! > 1 ? 'Each resource must appear at most once.' : alterResourceError(r.configs)));
}

/** ConfigAdminManager's check of a broker resource name in an alteration: empty (cluster default) or this node's id. */
export function brokerResourceNameError(resourceName: string, nodeId: number): string | null {
  if (resourceName === '') return null;
  if (!/^[+-]?\d+$/.test(resourceName) || !Number.isSafeInteger(Number(resourceName)) || Math.abs(Number(resourceName)) > 2 ** 31 - 1) {
    return `Node id must be an integer, but it is: ${resourceName}`;
  }
  return Number(resourceName) !== nodeId ? `Unexpected broker id, expected ${nodeId}, but received ${resourceName}` : null;
}

/**
 * IncrementalAlterConfigs' operations on a resource's stored configs:
 * SET, DELETE, and APPEND/SUBTRACT on list configs only (`listBase` gives a
 * list config's default text, null for any other name). The new configs, or
 * Kafka's error.
 */
export function applyIncrementalOps(
  current: Record<string, string>,
  ops: { name: string; configOperation: number; value: string | null }[],
  listBase: (name: string) => string | null,
): { configs: Record<string, string> } | { errorCode: number; errorMessage: string } {
  const next: Record<string, string> = { ...current };
  for (const op of ops) {
    switch (op.configOperation) {
      case AlterConfigOp.SET:
        next[op.name] = op.value!;
        break;
      case AlterConfigOp.DELETE:
        delete next[op.name];
        break;
      case AlterConfigOp.APPEND:
      case AlterConfigOp.SUBTRACT: {
        const opName = op.configOperation === AlterConfigOp.APPEND ? 'APPEND' : 'SUBTRACT';
        const base = listBase(op.name);
        if (base === null) return { errorCode: ErrorCode.INVALID_CONFIG, errorMessage: `Can't ${opName} to key ${op.name} because its type is not LIST.` };
        let parts = (next[op.name] ?? base).split(',').filter((p) => p !== '');
        for (const v of (op.value ?? '').split(',')) {
          if (op.configOperation === AlterConfigOp.APPEND) {
            if (!parts.includes(v)) parts.push(v);
          } else {
            const i = parts.indexOf(v);
            if (i >= 0) parts = [...parts.slice(0, i), ...parts.slice(i + 1)];
          }
        }
        next[op.name] = parts.join(',');
        break;
      }
      default:
        return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Unknown operations type ${op.configOperation}` };
    }
  }
  return { configs: next };
}
