// Email bodies in S3 (AWS): one object per email, `emails/<emailId>/body.json`, put once when the email is accepted
// and never rewritten. S3 bills a request, not a size: a 200 KB body is one PUT ($0.005 per 1,000) instead of
// 200 WRU in DynamoDB. Keyed by email so an email's attachments can sit beside its body; reads skip one whose
// email expired. The bucket's lifecycle deletes what reads already skip, by key (s3-expiry-keys.ts): a body sent at
// once under `retention/emails/<emailId>/body.json` after the stage's email retention, a scheduled one at the plain
// key after the retention plus the longest schedule. A read tries the retention key first: a scheduled email's body
// (and one written before the prefix) costs a second GET, billed like the first.
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { EmailBody, EmailBodyStore } from '../../app/emails/ports';
import { bodyKey, decodeBody, encodeBody } from '../email-body-object';
import { expiryKey, readKeys } from './s3-expiry-keys';
import { isMissingObject } from './s3-missing';

/** PUTs in flight at once for a batch of up to 100 emails. */
const PUT_CONCURRENCY = 10;

export interface S3EmailBodyOptions {
  readonly now?: () => number;
  /**
   * The stage's email retention: a body expiring within it from now (not scheduled ahead) is put under the
   * retention prefix. Absent: every body takes its plain key (the lifecycle's longer rule deletes them).
   */
  readonly retentionSeconds?: number;
}

export class S3EmailBodyStore implements EmailBodyStore {
  private readonly now: () => number;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly options: S3EmailBodyOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  async putMany(bodies: readonly { emailId: string; body: EmailBody; expiresAt: number }[]): Promise<void> {
    const now = this.now();
    for (let i = 0; i < bodies.length; i += PUT_CONCURRENCY) {
      await Promise.all(
        bodies.slice(i, i + PUT_CONCURRENCY).map(({ emailId, body, expiresAt }) =>
          this.client.send(
            new PutObjectCommand({
              Bucket: this.bucket,
              Key: expiryKey(bodyKey(emailId), expiresAt, now, this.options.retentionSeconds),
              Body: encodeBody(body, expiresAt),
              ContentType: 'application/json',
              ContentEncoding: 'gzip',
            }),
          ),
        ),
      );
    }
  }

  async get(emailId: string): Promise<EmailBody | null> {
    for (const key of readKeys(bodyKey(emailId))) {
      try {
        const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
        return Body ? decodeBody(await Body.transformToByteArray(), this.now()) : null;
      } catch (error) {
        if (!isMissingObject(error)) throw error;
      }
    }
    return null;
  }
}
