// Received messages in S3 (AWS): SES's S3 action writes each one to `<prefix><SES messageId>` in the inbound
// bucket, and the inbound function reads it back here with one GetObject, bounded in size before and while
// reading (a Lambda holds the message in memory; an object above the bound is not one SES wrote). An arrival no
// account received is deleted with one DeleteObject; the SES event of one every try failed on is kept beside it.
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  INBOUND_FAILURES_PREFIX,
  MAX_RAW_MESSAGE_BYTES,
  RawMessageMissingError,
  type RawMessageSource,
  RawMessageTooLargeError,
  SES_MESSAGE_ID,
} from '../../app/inbound/raw-messages';
import { isMissingObject } from './s3-missing';

export interface S3RawMessageOptions {
  readonly bucket: string;
  /** The receipt rule's objectKeyPrefix, e.g. `inbound/`. */
  readonly prefix: string;
  /** MAX_RAW_MESSAGE_BYTES (SES's own cap) by default. */
  readonly maxBytes?: number;
}

/** What of the SDK's Node stream this reads: its chunks, and a way to stop it early. */
type ObjectStream = AsyncIterable<Uint8Array> & { destroy?: () => void };

export class S3RawMessageSource implements RawMessageSource {
  private readonly maxBytes: number;

  constructor(
    private readonly client: S3Client,
    private readonly options: S3RawMessageOptions,
  ) {
    this.maxBytes = options.maxBytes ?? MAX_RAW_MESSAGE_BYTES;
  }

  async read(messageId: string): Promise<Uint8Array> {
    const key = this.keyOf(messageId);
    let answer: { Body?: unknown; ContentLength?: number | undefined };
    try {
      answer = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
    } catch (error) {
      if (isMissingObject(error)) throw new RawMessageMissingError(key, { cause: error });
      throw error;
    }
    const stream = answer.Body as ObjectStream | undefined;
    if (!stream) throw new RawMessageMissingError(key);
    if ((answer.ContentLength ?? 0) > this.maxBytes) {
      stream.destroy?.();
      throw new RawMessageTooLargeError(key, this.maxBytes);
    }
    return this.collect(stream, key);
  }

  async discard(messageId: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.keyOf(messageId) }));
  }

  async keepFailure(messageId: string, sesEvent: string): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.options.bucket,
        Key: this.keyOf(messageId, INBOUND_FAILURES_PREFIX, '.json'),
        Body: sesEvent,
        ContentType: 'application/json',
      }),
    );
  }

  /** The object key of an arrival: a plain SES id only, so nothing outside the prefix is read or written. */
  private keyOf(messageId: string, prefix = this.options.prefix, suffix = ''): string {
    if (!SES_MESSAGE_ID.test(messageId)) throw new Error(`${JSON.stringify(messageId)} is not an SES message id`);
    return `${prefix}${messageId}${suffix}`;
  }

  /** The chunks joined, counting as they come: a length S3 did not announce is bounded all the same. */
  private async collect(stream: ObjectStream, key: string): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of stream) {
      total += chunk.byteLength;
      if (total > this.maxBytes) {
        stream.destroy?.();
        throw new RawMessageTooLargeError(key, this.maxBytes);
      }
      chunks.push(chunk);
    }
    const raw = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      raw.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return raw;
  }
}
