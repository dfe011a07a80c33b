// Email bodies in DynamoDB: one `body` item per email in the emailParts table, put once when the email is accepted
// and never rewritten, so its size is billed once (1 WRU per started KB) and never again on a recipient's change.
// It holds the body object S3 would (email-body-object.ts: gzip of its JSON) as one binary attribute; items from
// before compression hold the fields as attributes and read as they were.
// An item holds at most 400 KB, enough for the 256 KB an email may take as stored; attachments, larger, want S3
// behind the same port (EmailBodyStore).
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { EmailBody, EmailBodyStore } from '../../app/emails/ports';
import { decodeBody, encodeBody } from '../email-body-object';
import { batchPutAll } from './operations';

/** The sort key of an email's body in the emailParts table. */
export const BODY_PART = 'body';

/**
 * Headers as [name, value] pairs (a header may be named `constructor` or `__proto__`, which the SDK's marshaller
 * cannot write as map keys; legacy email items hold maps), read back into a record without a prototype.
 */
export const storedHeaders = z
  .union([z.array(z.tuple([z.string(), z.string()])), z.record(z.string(), z.string()).transform(Object.entries)])
  .transform((pairs) => {
    const headers: Record<string, string> = Object.create(null);
    for (const [name, value] of pairs) headers[name] = value;
    return headers;
  });

/** An item from before compression: the body's fields as attributes. */
const legacyBodyItem = z.object({
  html: z.string().optional(),
  text: z.string().optional(),
  headers: storedHeaders.optional(),
  expiresAt: z.number().optional(),
});

/** Whether an item's TTL (epoch seconds) has passed: DynamoDB deletes expired items lazily, so reads skip them. */
export const expired = (item: { expiresAt?: unknown }, nowMs: number) =>
  typeof item.expiresAt === 'number' && item.expiresAt * 1000 <= nowMs;

export class DynamoEmailBodyStore implements EmailBodyStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  async putMany(bodies: readonly { emailId: string; body: EmailBody; expiresAt: number }[]): Promise<void> {
    await batchPutAll(
      this.doc,
      this.tableName,
      bodies.map(({ emailId, body, expiresAt }) => ({
        emailId,
        part: BODY_PART,
        object: new Uint8Array(encodeBody(body, expiresAt)),
        expiresAt,
      })),
    );
  }

  async get(emailId: string): Promise<EmailBody | null> {
    // Strongly consistent (a whole read unit instead of half): the send worker reads it a moment after it was
    // written, and a lagging replica's miss would send the copy without its body.
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { emailId, part: BODY_PART }, ConsistentRead: true }),
    );
    if (!Item || expired(Item, this.now())) return null;
    if (Item.object instanceof Uint8Array) return decodeBody(Item.object, this.now());
    const { html, text, headers } = legacyBodyItem.parse(Item);
    return {
      ...(html !== undefined ? { html } : {}),
      ...(text !== undefined ? { text } : {}),
      headers: headers ?? Object.create(null),
    };
  }
}
