// The file store on S3 (AWS): one object per key in the stack's bucket (beside the email bodies, under the same
// `emails/<emailId>/` prefix for attachments), its expiry in the object's metadata so reads skip an expired file
// before the lifecycle deletes it, and download links as presigned GETs that set the download's name and type.
// As the bodies, a file that expires within the retention is put under `retention/<key>` (s3-expiry-keys.ts) and
// looked for there first; a link is signed for the key a HEAD finds (one request, as cheap as a GET).
// A missing key is null however S3 words it: 404 NoSuchKey, or 403 AccessDenied to a role without s3:ListBucket
// (ours: their grants are objects under emails/* and retention/emails/*, never the bucket).
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  type DownloadLink,
  type DownloadOptions,
  downloadSeconds,
  type FileStore,
  InvalidFileKeyError,
  isFileKey,
  type PutFileOptions,
  type StoredFile,
} from '../../app/files/ports';
import { contentDisposition } from '../../domain/content-disposition';
import { EXPIRY_TAG, expiryKey, readKeys, SHORT_LIVED } from './s3-expiry-keys';
import { isMissingHead, isMissingObject } from './s3-missing';

/** The object metadata key holding the expiry (epoch seconds); S3 sends it as `x-amz-meta-expires-at`. */
export const EXPIRES_AT_METADATA = 'expires-at';

export interface S3FileStoreOptions {
  readonly now?: () => number;
  /** As the body store's: a file expiring within the retention from now goes under the retention prefix. */
  readonly retentionSeconds?: number;
}

export class S3FileStore implements FileStore {
  private readonly now: () => number;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly options: S3FileStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  async put(key: string, bytes: Uint8Array, options: PutFileOptions): Promise<void> {
    if (!isFileKey(key)) throw new InvalidFileKeyError(key);
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: expiryKey(key, options.expiresAt, this.now(), this.options.retentionSeconds),
        Body: bytes,
        ContentType: options.contentType,
        Metadata: { [EXPIRES_AT_METADATA]: String(options.expiresAt) },
        // Billed per tag and month, but such a file lives a day: the tag costs a thirtieth of a month's.
        ...(options.shortLived ? { Tagging: `${EXPIRY_TAG}=${SHORT_LIVED}` } : {}),
      }),
    );
  }

  async get(key: string): Promise<StoredFile | null> {
    if (!isFileKey(key)) return null;
    for (const stored of readKeys(key)) {
      try {
        const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: stored }));
        const expiresAt = Number(object.Metadata?.[EXPIRES_AT_METADATA]);
        if (!object.Body || !Number.isFinite(expiresAt) || expiresAt * 1000 <= this.now()) return null;
        return {
          bytes: await object.Body.transformToByteArray(),
          contentType: object.ContentType ?? 'application/octet-stream',
          expiresAt,
        };
      } catch (error) {
        if (!isMissingObject(error)) throw error;
      }
    }
    return null;
  }

  /** A HEAD of each key the file may be stored under (its bytes never read): found, and not expired. */
  async exists(key: string): Promise<boolean> {
    if (!isFileKey(key)) return false;
    for (const stored of readKeys(key)) {
      try {
        const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: stored }));
        const expiresAt = Number(head.Metadata?.[EXPIRES_AT_METADATA]);
        return Number.isFinite(expiresAt) && expiresAt * 1000 > this.now();
      } catch (error) {
        if (!isMissingHead(error)) throw error;
      }
    }
    return false;
  }

  /** The key the file is stored under: the retention key when a HEAD finds it there, else the plain one. */
  private async storedKey(key: string): Promise<string> {
    const [retained, plain] = readKeys(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: retained }));
      return retained;
    } catch (error) {
      if (isMissingHead(error)) return plain;
      throw error;
    }
  }

  async downloadUrl(key: string, options: DownloadOptions): Promise<DownloadLink> {
    if (!isFileKey(key)) throw new InvalidFileKeyError(key);
    const seconds = downloadSeconds(options);
    const stored = await this.storedKey(key);
    // Signed now: the link is good for `seconds` from this instant (and no longer than the role's session).
    const signedAt = this.now();
    const url = await getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: stored,
        ResponseContentDisposition: contentDisposition(options.filename),
        ResponseContentType: options.contentType,
      }),
      { expiresIn: seconds, signingDate: new Date(signedAt) },
    );
    return { url, expires_at: new Date(Math.floor(signedAt / 1000) * 1000 + seconds * 1000).toISOString() };
  }
}
