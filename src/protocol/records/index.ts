export * from './crc32c.js';
export * from './varint.js';
export * from './compression.js';
export * from './batch.js';
export * from './records.js';
export * from './legacy-record.js';
export * from './legacy-convert.js';
