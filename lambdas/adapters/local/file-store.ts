// Files in the local runtime, standing in for S3: each file an owner-only file under the data directory at its
// key (`<dataDir>/emails/<id>/attachments/<aid>`, the object key on AWS) with a sidecar `.<name>.meta` holding its
// content type and expiry; with SF_DATA_DIR=:memory: a map. Download links stand in for S3's presigned URLs:
// `<base>/files/<token>`, a signed token (domain/tokens.ts, kind `download`) naming the key, the download's
// name and type and its expiry, served by the runtime (file-downloads.ts), which streams the file (`open`) as S3
// would rather than reading it whole.
import { mkdir, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import * as z from 'zod';
import type { LinkSigner } from '../../app/emails/ports';
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
import { signToken, verifyToken } from '../../domain/tokens';
import { ownBytes } from '../own-bytes';

/** Where the runtime serves download links, below its base URL (which includes /v1). */
export const DOWNLOAD_PATH = '/files/';

const meta = z.object({ contentType: z.string(), expiresAt: z.number() });

/** What a verified download token names. */
export interface DownloadGrant {
  readonly key: string;
  readonly filename: string;
  readonly contentType: string;
  /** Epoch seconds. */
  readonly expiresAt: number;
}

/** A stored file opened for streaming: its size known up front (Content-Length), its bytes read as sent. */
export interface OpenedFile {
  readonly stream: Readable;
  readonly size: number;
  readonly contentType: string;
  readonly expiresAt: number;
}

/** A local file store: the FileStore port, plus streaming reads for the runtime's download route. */
export interface LocalFileStore extends FileStore {
  /** The file as a stream, or null when it is missing or expired (as `get`). */
  open(key: string): Promise<OpenedFile | null>;
}

/** Signs download links for a local store (both local stores share it). */
abstract class SignedLinks {
  constructor(
    protected readonly links: LinkSigner,
    protected readonly now: () => number,
  ) {}

  async downloadUrl(key: string, options: DownloadOptions): Promise<DownloadLink> {
    if (!isFileKey(key)) throw new InvalidFileKeyError(key);
    const expiresAt = Math.floor(this.now() / 1000) + downloadSeconds(options);
    const token = signToken(
      'download',
      { k: key, n: options.filename, t: options.contentType, e: String(expiresAt) },
      await this.links.secret(),
    );
    return {
      url: `${this.links.baseUrl()}${DOWNLOAD_PATH}${token}`,
      expires_at: new Date(expiresAt * 1000).toISOString(),
    };
  }
}

/** The token's grant, or null for a forged, altered or malformed one (expiry is the caller's to judge). */
export function readDownloadToken(token: string, secret: string): DownloadGrant | null {
  const payload = verifyToken('download', token, secret);
  const expiresAt = Number(payload?.e);
  if (!payload?.k || !isFileKey(payload.k) || payload.n === undefined || payload.t === undefined) return null;
  if (!Number.isSafeInteger(expiresAt)) return null;
  return { key: payload.k, filename: payload.n, contentType: payload.t, expiresAt };
}

export class DiskFileStore extends SignedLinks implements LocalFileStore {
  constructor(
    private readonly dataDir: string,
    links: LinkSigner,
    now: () => number = Date.now,
  ) {
    super(links, now);
  }

  private paths(key: string): { data: string; meta: string } {
    if (!isFileKey(key)) throw new InvalidFileKeyError(key);
    const data = join(this.dataDir, key);
    return { data, meta: join(dirname(data), `.${basename(data)}.meta`) };
  }

  async put(key: string, bytes: Uint8Array, options: PutFileOptions): Promise<void> {
    const { data, meta: metaPath } = this.paths(key);
    await mkdir(dirname(data), { recursive: true, mode: 0o700 });
    // The bytes land whole (a temporary file renamed) before the sidecar that makes them readable.
    const partial = join(dirname(data), `.${basename(data)}.partial`);
    await writeFile(partial, bytes, { mode: 0o600 });
    await rename(partial, data);
    const stored = { contentType: options.contentType, expiresAt: options.expiresAt };
    await writeFile(metaPath, JSON.stringify(stored), { mode: 0o600 });
  }

  async get(key: string): Promise<StoredFile | null> {
    if (!isFileKey(key)) return null;
    const { data, meta: metaPath } = this.paths(key);
    try {
      const parsed = meta.safeParse(JSON.parse(await readFile(metaPath, 'utf8')));
      if (!parsed.success || parsed.data.expiresAt * 1000 <= this.now()) return null;
      // readFile's Buffer seen as a Uint8Array: no second copy of a large file.
      return { bytes: ownBytes(await readFile(data)), ...parsed.data };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return null;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    if (!isFileKey(key)) return false;
    const { data, meta: metaPath } = this.paths(key);
    try {
      const parsed = meta.safeParse(JSON.parse(await readFile(metaPath, 'utf8')));
      if (!parsed.success || parsed.data.expiresAt * 1000 <= this.now()) return false;
      return (await stat(data)).isFile();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return false;
      throw error;
    }
  }

  async open(key: string): Promise<OpenedFile | null> {
    if (!isFileKey(key)) return null;
    const { data, meta: metaPath } = this.paths(key);
    try {
      const parsed = meta.safeParse(JSON.parse(await readFile(metaPath, 'utf8')));
      if (!parsed.success || parsed.data.expiresAt * 1000 <= this.now()) return null;
      // One descriptor for size and bytes: a file replaced in between cannot mismatch its Content-Length.
      const handle = await open(data, 'r');
      try {
        const { size } = await handle.stat();
        return { stream: handle.createReadStream(), size, ...parsed.data };
      } catch (error) {
        await handle.close();
        throw error;
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return null;
      throw error;
    }
  }
}

/** SF_DATA_DIR=:memory: keeps files as long as the process; also the fake the tests wire. */
export class MemoryFileStore extends SignedLinks implements LocalFileStore {
  private readonly files = new Map<string, StoredFile>();

  async put(key: string, bytes: Uint8Array, options: PutFileOptions): Promise<void> {
    if (!isFileKey(key)) throw new InvalidFileKeyError(key);
    this.files.set(key, {
      bytes: Uint8Array.from(bytes),
      contentType: options.contentType,
      expiresAt: options.expiresAt,
    });
  }

  async get(key: string): Promise<StoredFile | null> {
    const file = this.files.get(key);
    if (!file || file.expiresAt * 1000 <= this.now()) return null;
    return { ...file, bytes: Uint8Array.from(file.bytes) };
  }

  async exists(key: string): Promise<boolean> {
    const file = this.files.get(key);
    return file !== undefined && file.expiresAt * 1000 > this.now();
  }

  async open(key: string): Promise<OpenedFile | null> {
    const file = this.files.get(key);
    if (!file || file.expiresAt * 1000 <= this.now()) return null;
    const { bytes, contentType, expiresAt } = file;
    return { stream: Readable.from([Buffer.from(bytes)]), size: bytes.byteLength, contentType, expiresAt };
  }

  /** Files stored (for tests: nothing is stored twice). */
  get size(): number {
    return this.files.size;
  }
}

/** The local runtime's file store for its data directory. */
export function localFileStore(dataDir: string, links: LinkSigner, now: () => number = Date.now): LocalFileStore {
  return dataDir === ':memory:' ? new MemoryFileStore(links, now) : new DiskFileStore(dataDir, links, now);
}
