// Email bodies in S3 (AWS): one object per email, `emails/<emailId>/body.json`, put once when the email is accepted
// and never rewritten. S3 bills a request, not a size: a 200 KB body is one PUT ($0.005 per 1,000) instead of
// 200 WRU in DynamoDB. Keyed by email so an email's attachments can sit beside its body; reads skip one whose
// email expired. Not wired on AWS yet (no bucket in lib/, no plug): the functions keep bodies in emailParts.
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { EmailBody, EmailBodyStore } from '../../app/emails/ports';
import { bodyKey, decodeBody, encodeBody } from '../email-body-object';

/** PUTs in flight at once for a batch of up to 100 emails. */
const PUT_CONCURRENCY = 10;

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
