// The file store port: bytes kept under a key until an expiry, read back, and handed out through an expiring
// download link. Attachments of sent emails and received raw messages go through it (S3 on AWS, the data
// directory locally). Keys are chosen by the caller, e.g. `emails/<emailId>/attachments/<attachmentId>`.

/** A stored file as read back. */
export interface StoredFile {
  readonly bytes: Uint8Array;
  readonly contentType: string;
  /** Epoch seconds after which the file is gone (storage deletes it lazily; reads already skip it). */
  readonly expiresAt: number;
}

/** A link anyone holding it can download the file with, until `expires_at` (ISO 8601). */
export interface DownloadLink {
  readonly url: string;
  readonly expires_at: string;
}

export interface PutFileOptions {
  readonly contentType: string;
  /** Epoch seconds: the file is not returned from then on, and storage deletes it. */
  readonly expiresAt: number;
  /**
   * Kept a day at most (a test-mode email's attachment): on AWS tagged for the bucket's one-day lifecycle rule, so
   * S3 deletes it then rather than after the whole retention (reads skip it from `expiresAt` either way).
   */
  readonly shortLived?: boolean;
}

export interface DownloadOptions {
  /** The name the browser saves it under (Content-Disposition: attachment). */
  readonly filename: string;
  /** The Content-Type the download is served with. */
  readonly contentType: string;
  /** How long the link works; DEFAULT_DOWNLOAD_SECONDS when absent. */
  readonly expiresInSeconds?: number;
}

/** Download links work for an hour unless asked otherwise (as Resend's attachment links). */
export const DEFAULT_DOWNLOAD_SECONDS = 3600;
/** The longest a link may be asked for: SigV4 presigned URLs stop at 7 days. */
export const MAX_DOWNLOAD_SECONDS = 7 * 86_400;

/** Bytes by key, with an expiry and download links. */
export interface FileStore {
  /** Stores (or replaces) the bytes under `key`. Throws InvalidFileKeyError for a key isFileKey refuses. */
  put(key: string, bytes: Uint8Array, options: PutFileOptions): Promise<void>;
  /** The file, or null when there is none under the key or its expiry has passed. */
  get(key: string): Promise<StoredFile | null>;
  /** Whether `get` would find a file under the key now, without reading its bytes (S3: a HEAD). */
  exists(key: string): Promise<boolean>;
  /** An expiring link that downloads the file under `key` as an attachment named `filename`. */
  downloadUrl(key: string, options: DownloadOptions): Promise<DownloadLink>;
}

/**
 * A key: slash-separated segments of letters, digits, `_`, `-` and `.`, none starting with a dot (so no `..`, and
 * the local store's sidecar files, which start with one, never collide with a key), at most 512 characters.
 */
const FILE_KEY = /^(?=.{1,512}$)[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

export function isFileKey(key: string): boolean {
  return FILE_KEY.test(key);
}

export class InvalidFileKeyError extends Error {
  constructor(key: string) {
    super(`Not a file key: ${JSON.stringify(key.slice(0, 100))}`);
    this.name = 'InvalidFileKeyError';
  }
}

/** The link's lifetime in seconds, bounded to (0, MAX_DOWNLOAD_SECONDS]. */
export function downloadSeconds(options: DownloadOptions): number {
  const asked = options.expiresInSeconds ?? DEFAULT_DOWNLOAD_SECONDS;
  return Math.max(1, Math.min(MAX_DOWNLOAD_SECONDS, Math.floor(asked)));
}
