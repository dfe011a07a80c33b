// Contract suite for the FileStore port (bytes by key with an expiry and download links), run against the
// in-memory store, the local data directory's files and S3 (aws-sdk-client-mock): bytes come back identical with
// their type, a missing or expired key has none, a put replaces, keys that could leave their folder are refused,
// and a download link says when it expires (and, where the suite can fetch it, downloads the bytes as an
// attachment with the asked name and type).
import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { DEFAULT_DOWNLOAD_SECONDS, type FileStore } from '../../../lambdas/app/files/ports';

/** Builds a store whose clock says `now` (epoch ms), over the same storage each time. */
export type FileStoreFactory = (now: () => number) => FileStore;

export interface FileStoreContractOptions {
  /** Fetches a download link (over HTTP), when the adapter serves its own; S3's links are checked by shape. */
  readonly download?: (url: string) => Promise<Response>;
}

const NOW = Date.UTC(2026, 10, 26, 8);
const key = (name = 'file.bin') => `emails/email_${randomBytes(6).toString('hex')}/attachments/${name}`;

export function fileStoreContract(make: FileStoreFactory, options: FileStoreContractOptions = {}): void {
  it('gives back exactly the bytes and type it was given, binary and empty alike', async () => {
    // Arrange
    const store = make(() => NOW);
    const binary = { key: key(), bytes: new Uint8Array(randomBytes(300_000)), contentType: 'application/pdf' };
    const empty = { key: key('empty.txt'), bytes: new Uint8Array(0), contentType: 'text/plain' };

    // Act
    for (const f of [binary, empty])
      await store.put(f.key, f.bytes, { contentType: f.contentType, expiresAt: NOW / 1000 + 60 });
    const read = await Promise.all([store.get(binary.key), store.get(empty.key)]);

    // Assert
    expect(Buffer.from(read[0]?.bytes ?? []).equals(Buffer.from(binary.bytes))).toBe(true);
    expect(read[0]).toMatchObject({ contentType: 'application/pdf', expiresAt: NOW / 1000 + 60 });
    expect(read[1]?.bytes.byteLength).toBe(0);
    expect(read[1]?.contentType).toBe('text/plain');
  });

  it('has nothing under a key it was never given', async () => {
    expect(await make(() => NOW).get(key())).toBeNull();
  });

  it('returns nothing once the expiry has passed (storage deletes it lazily)', async () => {
    // Arrange
    const k = key();
    await make(() => NOW).put(k, new Uint8Array([1, 2, 3]), { contentType: 'image/png', expiresAt: NOW / 1000 + 60 });

    // Act / Assert
    expect((await make(() => NOW + 59_000).get(k))?.bytes).toEqual(new Uint8Array([1, 2, 3]));
    expect(await make(() => NOW + 60_000).get(k)).toBeNull();
  });

  it('says whether a file is stored without reading it: yes until its expiry, then no; no for a key never given', async () => {
    // Arrange
    const k = key();
    await make(() => NOW).put(k, new Uint8Array([1, 2, 3]), { contentType: 'image/png', expiresAt: NOW / 1000 + 60 });

    // Act / Assert
    expect(await make(() => NOW + 59_000).exists(k)).toBe(true);
    expect(await make(() => NOW + 60_000).exists(k)).toBe(false);
    expect(await make(() => NOW).exists(key())).toBe(false);
    expect(await make(() => NOW).exists('../escape')).toBe(false);
  });

  it('reads back a file that expires long after now (a scheduled email), as one that expires soon', async () => {
    // Arrange: S3 keys the two under different prefixes (lifecycle rules); the port hides that.
    const store = make(() => NOW);
    const [soon, late] = [key(), key()];
    await store.put(soon, new Uint8Array([1]), { contentType: 'text/plain', expiresAt: NOW / 1000 + 60 });
    await store.put(late, new Uint8Array([2]), { contentType: 'text/plain', expiresAt: NOW / 1000 + 90 * 86_400 });

    // Act / Assert
    expect((await store.get(soon))?.bytes).toEqual(new Uint8Array([1]));
    expect(await store.get(late)).toMatchObject({ bytes: new Uint8Array([2]), expiresAt: NOW / 1000 + 90 * 86_400 });
  });

  it('replaces what a key held when put again', async () => {
    // Arrange
    const store = make(() => NOW);
    const k = key();
    await store.put(k, new Uint8Array([1]), { contentType: 'text/plain', expiresAt: NOW / 1000 + 60 });

    // Act
    await store.put(k, new Uint8Array([2, 2]), { contentType: 'text/csv', expiresAt: NOW / 1000 + 120 });

    // Assert
    expect(await store.get(k)).toMatchObject({ bytes: new Uint8Array([2, 2]), contentType: 'text/csv' });
  });

  it.each([
    '../escape',
    'emails/../../etc/passwd',
    '/absolute',
    'emails//double',
    '.hidden',
    'emails/.meta',
    'a\\b',
    '',
  ])('refuses the key %j (put throws, get has nothing, no link)', async (bad) => {
    const store = make(() => NOW);
    await expect(
      store.put(bad, new Uint8Array([1]), { contentType: 'text/plain', expiresAt: NOW / 1000 + 60 }),
    ).rejects.toThrow(/Not a file key/);
    expect(await store.get(bad)).toBeNull();
    await expect(store.downloadUrl(bad, { filename: 'x', contentType: 'text/plain' })).rejects.toThrow(
      /Not a file key/,
    );
  });

  it('hands out a link that expires an hour from now by default, or when asked', async () => {
    // Arrange
    const store = make(() => NOW);
    const k = key();
    await store.put(k, new Uint8Array([1]), { contentType: 'text/plain', expiresAt: NOW / 1000 + 86_400 });

    // Act
    const hour = await store.downloadUrl(k, { filename: 'a.txt', contentType: 'text/plain' });
    const minute = await store.downloadUrl(k, { filename: 'a.txt', contentType: 'text/plain', expiresInSeconds: 60 });

    // Assert
    expect(hour.expires_at).toBe(new Date(NOW + DEFAULT_DOWNLOAD_SECONDS * 1000).toISOString());
    expect(minute.expires_at).toBe(new Date(NOW + 60_000).toISOString());
    expect(new URL(hour.url).protocol).toMatch(/^https?:$/);
  });

  const download = options.download;
  if (download) {
    it('downloads through the link byte-identical, as an attachment with the asked name and type', async () => {
      // Arrange
      const store = make(() => Date.now());
      const k = key();
      const bytes = new Uint8Array(randomBytes(70_000));
      await store.put(k, bytes, { contentType: 'application/octet-stream', expiresAt: Date.now() / 1000 + 600 });
      const { url } = await store.downloadUrl(k, { filename: 'résumé "final".pdf', contentType: 'application/pdf' });

      // Act
      const response = await download(url);

      // Assert
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/pdf');
      expect(response.headers.get('content-disposition')).toBe(
        `attachment; filename="r_sum_ _final_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`,
      );
      expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    });

    it('answers 410 for an expired link and 404 for a forged one or a file no longer stored', async () => {
      // Arrange
      let now = Date.now();
      const store = make(() => now);
      const k = key();
      await store.put(k, new Uint8Array([7]), { contentType: 'text/plain', expiresAt: Math.floor(now / 1000) + 600 });
      const expired = await store.downloadUrl(k, { filename: 'a.txt', contentType: 'text/plain', expiresInSeconds: 1 });
      const gone = await store.downloadUrl(key(), { filename: 'b.txt', contentType: 'text/plain' });
      now = Date.now() + 2_000;
      const forged = `${expired.url.slice(0, -4)}AAAA`;

      // Act
      const answers = await Promise.all([expired.url, forged, gone.url].map(download));

      // Assert
      expect(answers.map((r) => r.status)).toEqual([410, 404, 404]);
      expect(await answers[0]?.json()).toMatchObject({ status: 410, code: 'link_expired' });
      expect(await answers[1]?.json()).toMatchObject({ status: 404, code: 'not_found' });
    });
  }
}
