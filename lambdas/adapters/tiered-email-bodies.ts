// Email bodies by size (AWS): a small body stays in DynamoDB (its emailParts `body` item), a larger one goes to S3.
// DynamoDB bills 1 WRU ($0.625 per million) per started KB written plus $0.45 per GB-month stored with PITR;
// S3 bills a request ($5 per million PUTs, $0.40 per million GETs) whatever the size, and $0.023 per GB-month.
// Per million emails kept a month, a B KB body costs about 1.06 × B dollars in DynamoDB and 5.8 + 0.02 × B in S3
// (one PUT, the send worker's and a reader's GET): they cross near 5.5 KB, so bodies up to 5 KB as stored (gzip,
// email-body-object.ts) stay inline. A read asks the inline store first (a miss is half a read unit) and S3 after it; a body is written to
// exactly one of them. No SDK here: the two stores are given.
import type { EmailBody, EmailBodyStore } from '../app/emails/ports';
import { encodeBody } from './email-body-object';

/** The largest body (as stored, compressed, in bytes) kept inline: about where DynamoDB's price passes S3's. */
export const INLINE_BODY_MAX_BYTES = 5 * 1024;

type Put = Parameters<EmailBodyStore['putMany']>[0][number];

export class TieredEmailBodyStore implements EmailBodyStore {
  constructor(
    private readonly inline: EmailBodyStore,
    private readonly large: EmailBodyStore,
    private readonly inlineMaxBytes = INLINE_BODY_MAX_BYTES,
  ) {}

  async putMany(bodies: readonly Put[]): Promise<void> {
    const small: Put[] = [];
    const big: Put[] = [];
    for (const put of bodies) {
      const bytes = encodeBody(put.body, put.expiresAt).length;
      (bytes <= this.inlineMaxBytes ? small : big).push(put);
    }
    await Promise.all([small.length ? this.inline.putMany(small) : null, big.length ? this.large.putMany(big) : null]);
  }

  async get(emailId: string): Promise<EmailBody | null> {
    return (await this.inline.get(emailId)) ?? this.large.get(emailId);
  }
}
