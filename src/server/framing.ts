/** Thrown when a frame's size prefix is negative or above the limit: Kafka closes the connection. */
export class FrameSizeError extends Error {}

/**
 * Cuts a TCP byte stream into Kafka frames (int32 size + body), whatever the
 * chunk boundaries. A frame that lies within one chunk is returned as a view
 * of it; the chunks of a frame that spans several are joined once, when the
 * last of them arrives (never re-copied per chunk).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  /** A bad size prefix seen after complete frames: reported by the next push. */
  failure: FrameSizeError | null = null;

  constructor(private readonly maxFrameBytes: number) {}

  /** Bytes held for an incomplete frame (bounded by maxFrameBytes + 4 plus one chunk). */
  get buffered(): number {
    return this.bufferedBytes;
  }

  /**
   * The frames completed by this chunk. A bad size prefix throws FrameSizeError,
   * unless complete frames came before it in the same chunk: those are
   * returned first, and the error is thrown by the next call.
   */
  push(chunk: Buffer): Buffer[] {
    if (this.failure) throw this.failure;
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      const size = this.peekSize();
      if (size === null) break;
      if (size < 0 || size > this.maxFrameBytes) {
        this.failure = new FrameSizeError(`frame of ${size} bytes is outside [0, ${this.maxFrameBytes}] (socket.request.max.bytes)`);
        if (frames.length === 0) throw this.failure;
        break;
      }
      if (this.bufferedBytes < 4 + size) break;
      frames.push(this.take(4 + size).subarray(4));
    }
    return frames;
  }

  /** The size prefix of the next frame, once its 4 bytes have arrived. */
  private peekSize(): number | null {
    if (this.bufferedBytes < 4) return null;
    const first = this.chunks[0]!;
    if (first.length >= 4) return first.readInt32BE(0);
    this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.readInt32BE(0);
  }

  /** Removes and returns the next n buffered bytes. */
  private take(n: number): Buffer {
    this.bufferedBytes -= n;
    const first = this.chunks[0]!;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0]!;
      const used = Math.min(c.length, n - filled);
      c.copy(out, filled, 0, used);
      filled += used;
      if (used === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(used);
    }
    return out;
  }
}
