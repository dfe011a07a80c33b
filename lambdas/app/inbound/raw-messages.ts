// The port inbound mail is read through on AWS: SES's S3 action stores each received message whole before the
// Lambda action runs, so the function is handed an id, not the bytes (a Lambda event carries only headers).

/** Where SES's S3 action writes received messages in the inbound bucket (the receipt rule's objectKeyPrefix). */
export const INBOUND_OBJECTS_PREFIX = 'inbound/';

/**
 * Where the inbound function keeps the SES event of an arrival every try failed on (beside the message, in the
 * inbound bucket, expired with it): what the runbook's replay invokes the function with.
 */
export const INBOUND_FAILURES_PREFIX = 'inbound-failures/';

/** SES's own cap on a received message (headers included); a larger object is not one SES wrote. */
export const MAX_RAW_MESSAGE_BYTES = 40 * 1024 * 1024;

/** SES message ids are letters, digits and hyphens; anything else must never become an object key. */
export const SES_MESSAGE_ID = /^[A-Za-z0-9-]{1,128}$/;

/** Where received messages are read from, by the id of their arrival. */
export interface RawMessageSource {
  /**
   * The message exactly as received (RFC 5322 bytes). Fails with RawMessageMissingError when nothing is stored
   * under that id and RawMessageTooLargeError above the source's bound; both are left to the invoker's retries
   * and dead-letter destination, so the message stays in the bucket to be replayed (docs/runbook.md).
   */
  read(messageId: string): Promise<Uint8Array>;
  /**
   * Deletes the stored arrival. Called only once receiveEmail kept nothing of it (every recipient dropped: the
   * receipt rule takes mail for every verified identity), so it is not kept for the whole retention. A stored
   * arrival stays until the lifecycle expires it: a duplicate invocation or a replay reads it again.
   */
  discard(messageId: string): Promise<void>;
  /**
   * Keeps the SES event (JSON) of an arrival every try failed on, under INBOUND_FAILURES_PREFIX + the id + `.json`,
   * for the runbook's replay (docs/runbook.md, "Replaying a failed message").
   */
  keepFailure(messageId: string, sesEvent: string): Promise<void>;
}

export class RawMessageMissingError extends Error {
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(`No received message is stored at ${key}`, options);
    this.name = 'RawMessageMissingError';
  }
}

export class RawMessageTooLargeError extends Error {
  constructor(
    readonly key: string,
    readonly maxBytes: number,
  ) {
    super(`The received message at ${key} is above ${maxBytes} bytes`);
    this.name = 'RawMessageTooLargeError';
  }
}
