// Email bodies in S3 (AWS): one object per email, `emails/<emailId>/body.json`, put once when the email is accepted
// and never rewritten. S3 bills a request, not a size: a 200 KB body is one PUT ($0.005 per 1,000) instead of
// 200 WRU in DynamoDB. Keyed by email so an email's attachments can sit beside its body; the bucket's lifecycle
// rule deletes objects after the email retention (lib/data-stack.ts), and reads skip one whose email expired.
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import * as z from 'zod';
import type { EmailBody, EmailBodyStore } from '../../app/emails/ports';

/** Where an email's objects live in the bucket (the prefix the functions' IAM policies name). */
export const EMAIL_OBJECTS_PREFIX = 'emails/';
export const bodyKey = (emailId: string) => `${EMAIL_OBJECTS_PREFIX}${emailId}/body.json`;
/** PUTs in flight at once for a batch of up to 100 emails. */
const PUT_CONCURRENCY = 10;

/** Headers as [name, value] pairs: a header may be named `__proto__`, which a JSON object would lose. */
const storedBody = z.object({
  html: z.string().optional(),
  text: z.string().optional(),
  headers: z.array(z.tuple([z.string(), z.string()])),
  expiresAt: z.number(),
});

export function encodeBody(body: EmailBody, expiresAt: number): string {
  return JSON.stringify({ html: body.html, text: body.text, headers: Object.entries(body.headers), expiresAt });
}

/** The body as stored, or null when its email's retention has passed (`nowMs`). */
export function decodeBody(json: string, nowMs: number): EmailBody | null {
  const { html, text, headers, expiresAt } = storedBody.parse(JSON.parse(json));
  if (expiresAt * 1000 <= nowMs) return null;
  const record: Record<string, string> = Object.create(null);
  for (const [name, value] of headers) record[name] = value;
  return { ...(html !== undefined ? { html } : {}), ...(text !== undefined ? { text } : {}), headers: record };
}

export class S3EmailBodyStore implements EmailBodyStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly now: () => number = Date.now,
  ) {}

  async putMany(bodies: readonly { emailId: string; body: EmailBody; expiresAt: number }[]): Promise<void> {
    for (let i = 0; i < bodies.length; i += PUT_CONCURRENCY) {
      await Promise.all(
        bodies.slice(i, i + PUT_CONCURRENCY).map(({ emailId, body, expiresAt }) =>
          this.client.send(
            new PutObjectCommand({
              Bucket: this.bucket,
              Key: bodyKey(emailId),
              Body: encodeBody(body, expiresAt),
              ContentType: 'application/json',
            }),
          ),
        ),
      );
    }
  }

  async get(emailId: string): Promise<EmailBody | null> {
    try {
      const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: bodyKey(emailId) }));
      return Body ? decodeBody(await Body.transformToString(), this.now()) : null;
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      throw error;
    }
  }
}
