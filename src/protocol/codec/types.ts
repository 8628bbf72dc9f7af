// Shared types for the Kafka wire codecs and the generated message files.
import type { Reader } from './reader.js';
import type { Writer } from './writer.js';

/**
 * A `records` field. Decoders always produce `Buffer | null` (a view into the
 * request buffer); encoders also accept a list of chunks, written as one byte
 * field whose length is the sum, each chunk appended by reference.
 */
export type Records = Buffer | Buffer[] | null;

/** A tagged field whose tag the generated code does not know; kept raw. */
export interface TaggedField {
  tag: number;
  data: Buffer;
}

/**
 * Recursive optional version of a message type, accepted by the writers.
 * A missing (undefined) field is written as the spec's default.
 */
export type Input<T> = T extends Buffer | bigint | string | number | boolean | null | undefined
  ? T
  : T extends TaggedField
    ? TaggedField
    : T extends readonly (infer E)[]
      ? readonly Input<E>[]
      : T extends object
        ? { [K in keyof T]?: Input<T[K]> }
        : T;

export interface ApiCodec<Req, Res> {
  apiKey: number;
  /** Name stem, e.g. "Produce". */
  name: string;
  minVersion: number;
  maxVersion: number;
  /** Lowest version Kafka 4.x defines (4.3.1's definition); below it, versions only Kafka 3.9.1 defines. */
  kafka4MinVersion: number;
  /** First flexible (KIP-482) version; Infinity if never flexible. */
  flexibleMin: number;
  latestVersionUnstable: boolean;
  readRequest(r: Reader, version: number): Req;
  writeRequest(w: Writer, version: number, m: Input<Req>): void;
  readResponse(r: Reader, version: number): Res;
  writeResponse(w: Writer, version: number, m: Input<Res>): void;
  /**
   * The response to a request that failed inside the broker, as Kafka's
   * `getErrorResponse` builds it: the request's resources echoed, each with
   * `errorCode`, and the top-level code where the version has one. Null when
   * the request gets no response (Produce with acks=0).
   */
  errorResponse(request: Req, version: number, errorCode: number): Input<Res> | null;
}

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
