// The generator's union of Kafka 3.9.1's and 4.3.1's definitions: it extends a
// 4.x message to 3.9-only versions and refuses definitions that disagree on
// the wire where their versions overlap.
import { describe, expect, it } from 'vitest';
import { mergeSpecs } from '../../../scripts/protocol-gen/merge.js';
import type { MessageSpec } from '../../../scripts/protocol-gen/spec.js';

const old: MessageSpec = {
  apiKey: 8,
  type: 'request',
  name: 'OffsetCommitRequest',
  validVersions: '0-3',
  flexibleVersions: 'none',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    { name: 'GenerationId', type: 'int32', versions: '1+', default: '-1' },
    { name: 'CommitTimestamp', type: 'int64', versions: '1', default: '-1' },
    { name: 'RetentionTimeMs', type: 'int64', versions: '2+', default: '-1' },
  ],
};
const neu: MessageSpec = {
  apiKey: 8,
  type: 'request',
  name: 'OffsetCommitRequest',
  validVersions: '2-5',
  flexibleVersions: 'none',
  fields: [
    { name: 'GroupId', type: 'string', versions: '0+' },
    { name: 'GenerationId', type: 'int32', versions: '1+', default: '-1' },
    { name: 'RetentionTimeMs', type: 'int64', versions: '2-4', default: '-1' },
    { name: 'TopicId', type: 'uuid', versions: '5+' },
  ],
};

describe('union of the 3.9.1 and 4.x definitions', () => {
  it('extends the 4.x message to the versions only 3.9.1 defines, fields in wire order', () => {
    const m = mergeSpecs(old, neu);
    expect(m.validVersions).toBe('0-5');
    expect(m.fields!.map((f) => [f.name, f.versions])).toEqual([
      ['GroupId', '0+'],
      ['GenerationId', '1+'],
      ['CommitTimestamp', '1'],
      ['RetentionTimeMs', '2-4'],
      ['TopicId', '5+'],
    ]);
  });

  it('reports a field whose type, versions or default differ in the overlap', () => {
    const typeChanged = { ...neu, fields: neu.fields!.map((f) => (f.name === 'GenerationId' ? { ...f, type: 'int64' } : f)) };
    expect(() => mergeSpecs(old, typeChanged)).toThrow(/OffsetCommitRequest\.GenerationId: type int32 \(3\.9\) vs int64 \(4\.x\)/);
    const dropped = { ...neu, fields: neu.fields!.filter((f) => f.name !== 'GenerationId') };
    expect(() => mergeSpecs(old, dropped)).toThrow(/OffsetCommitRequest\.GenerationId: versions 2-3 \(3\.9\) vs none \(4\.x\) in the overlap/);
    const defaulted = { ...neu, fields: neu.fields!.map((f) => (f.name === 'RetentionTimeMs' ? { ...f, default: '0' } : f)) };
    expect(() => mergeSpecs(old, defaulted)).toThrow(/RetentionTimeMs: default -1 \(3\.9\) vs 0 \(4\.x\)/);
  });

  it('reports flexible versions that differ and ranges that leave a gap', () => {
    expect(() => mergeSpecs(old, { ...neu, flexibleVersions: '3+' })).toThrow(/flexibleVersions none \(3\.9\) vs 3\+ \(4\.x\)/);
    expect(() => mergeSpecs(old, { ...neu, validVersions: '5-6' })).toThrow(/leave a gap/);
  });
});
