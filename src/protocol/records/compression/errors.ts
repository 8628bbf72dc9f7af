// What a codec throws: CompressionError, whose kafkaError says what a broker answers.

export type CompressionErrorCode = 'CORRUPT_MESSAGE' | 'RECORD_TOO_LARGE' | 'UNSUPPORTED_COMPRESSION_TYPE';

export class CompressionError extends Error {
  constructor(
    readonly kafkaError: CompressionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CompressionError';
  }
}

export function tooLarge(codec: string, maxBytes: number): CompressionError {
  return new CompressionError('RECORD_TOO_LARGE', `${codec}: decompressed size exceeds the limit of ${maxBytes} bytes`);
}

export function corrupt(codec: string, why: string): CompressionError {
  return new CompressionError('CORRUPT_MESSAGE', `${codec}: ${why}`);
}

export function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

export function errMsg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
