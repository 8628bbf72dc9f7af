/** An append refused or failed with a Kafka error code (the Produce handler answers it). */
export class AppendError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}
