/** Thrown when a frame's size prefix is negative or above the limit: Kafka closes the connection. */
export class FrameSizeError extends Error {}

/**
 * Cuts a TCP byte stream into Kafka frames (int32 size + body), whatever the
 * chunk boundaries. Complete frames come out as Buffers that alias the input
 * when a frame lies within one chunk.
 */
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  private offset = 0;

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes held for an incomplete frame (bounded by maxFrameBytes + 4). */
  get buffered(): number {
    return this.buffer.length - this.offset;
  }

  push(chunk: Buffer): Buffer[] {
    if (this.offset === this.buffer.length) {
      this.buffer = chunk;
    } else {
      this.buffer = Buffer.concat([this.buffer.subarray(this.offset), chunk]);
    }
    this.offset = 0;
    const frames: Buffer[] = [];
    while (this.buffer.length - this.offset >= 4) {
      const size = this.buffer.readInt32BE(this.offset);
      if (size < 0 || size > this.maxFrameBytes) {
        throw new FrameSizeError(`frame of ${size} bytes is outside [0, ${this.maxFrameBytes}] (socket.request.max.bytes)`);
      }
      if (this.buffer.length - this.offset - 4 < size) break;
      frames.push(this.buffer.subarray(this.offset + 4, this.offset + 4 + size));
      this.offset += 4 + size;
    }
    if (this.offset === this.buffer.length) {
      this.buffer = Buffer.alloc(0);
      this.offset = 0;
    }
    return frames;
  }
}
