// Email bodies in S3 (AWS): one object per email, `emails/<emailId>/body.json`, put once when the email is accepted
// and never rewritten. S3 bills a request, not a size: a 200 KB body is one PUT ($0.005 per 1,000) instead of
// 200 WRU in DynamoDB. Keyed by email so an email's attachments can sit beside its body; reads skip one whose
// email expired. The bucket's lifecycle deletes what reads already skip: objects tagged EXPIRY_TAG=retention after
// the stage's email retention, the others (a scheduled email's, kept until its send plus the retention) after the
// retention plus the longest schedule (lib/data-stack.ts).
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { EmailBody, EmailBodyStore } from '../../app/emails/ports';
import { bodyKey, decodeBody, encodeBody } from '../email-body-object';
import { isMissingObject } from './s3-missing';

/** PUTs in flight at once for a batch of up to 100 emails. */
const PUT_CONCURRENCY = 10;

/** The object tag the bucket's short lifecycle rule selects: bodies that expire within the retention from now. */
export const EXPIRY_TAG = 'sendflow-expiry';
export const EXPIRY_RETENTION = 'retention';

export interface S3EmailBodyOptions {
  readonly now?: () => number;
  /**
   * The stage's email retention: a body expiring within it from now (not scheduled ahead) is tagged for the
   * lifecycle's retention rule. Absent: no body is tagged (the lifecycle's longer rule deletes them).
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
    const retention = this.options.retentionSeconds;
    const horizon = retention === undefined ? -1 : Math.floor(this.now() / 1000) + retention;
    for (let i = 0; i < bodies.length; i += PUT_CONCURRENCY) {
      await Promise.all(
        bodies.slice(i, i + PUT_CONCURRENCY).map(({ emailId, body, expiresAt }) =>
          this.client.send(
            new PutObjectCommand({
              Bucket: this.bucket,
              Key: bodyKey(emailId),
              Body: encodeBody(body, expiresAt),
              ContentType: 'application/json',
              ContentEncoding: 'gzip',
              ...(expiresAt <= horizon ? { Tagging: `${EXPIRY_TAG}=${EXPIRY_RETENTION}` } : {}),
            }),
          ),
        ),
      );
    }
  }

  async get(emailId: string): Promise<EmailBody | null> {
    try {
      const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: bodyKey(emailId) }));
      return Body ? decodeBody(await Body.transformToByteArray(), this.now()) : null;
    } catch (error) {
      if (isMissingObject(error)) return null;
      throw error;
    }
  }
}
