// The preview's inline images (app/dashboard/inline-images): only raster images by their bytes, only the caller's
// email, within the per-image, per-preview and response-size bounds.
import { describe, expect, it } from 'vitest';
import {
  INLINE_IMAGE_MAX_BYTES,
  type InlineImageDeps,
  inlineImages,
  PREVIEW_MAX_CHARS,
  rasterImageType,
} from '../../lambdas/app/dashboard/inline-images';

const PNG_HEAD = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const png = (size: number) => Uint8Array.from({ length: size }, (_, i) => PNG_HEAD[i] ?? 0);
const tenant = { accountId: 'acct_1', mode: 'test' as const };

function deps(files: Record<string, Uint8Array>, accountId = 'acct_1'): InlineImageDeps {
  const attachments = Object.entries(files).map(([cid, bytes]) => ({
    id: `att_${cid}`,
    filename: `${cid}.png`,
    size: bytes.length,
    contentType: 'image/png',
    disposition: 'inline' as const,
    contentId: cid,
  }));
  return {
    emails: { get: async () => ({ id: 'email_1', accountId, mode: 'test', attachments }) as never },
    receivedEmails: { get: async () => null },
    files: {
      get: async (key: string) => {
        const cid = /att_(.+)$/.exec(key)?.[1] ?? '';
        const bytes = files[cid];
        return bytes ? { bytes, contentType: 'image/png', expiresAt: 2e9 } : null;
      },
    },
  };
}

describe('inline images of the preview', () => {
  it('knows PNG, JPEG, GIF and WebP by their bytes, and nothing else', () => {
    expect(rasterImageType(png(10))).toBe('image/png');
    expect(rasterImageType(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(rasterImageType(new TextEncoder().encode('GIF89a'))).toBe('image/gif');
    expect(rasterImageType(new TextEncoder().encode('RIFF\u0000\u0000\u0000\u0000WEBPVP8 '))).toBe('image/webp');
    expect(rasterImageType(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(rasterImageType(new TextEncoder().encode('<html>'))).toBeNull();
  });

  it('inlines the named images within 1 MB each and 2 MB in all; none of another tenant', async () => {
    const files = {
      a: png(900_000),
      b: png(900_000),
      c: png(900_000),
      big: png(INLINE_IMAGE_MAX_BYTES + 1),
      x: png(5),
    };
    const wanted = new Set(['a', 'b', 'c', 'big']);

    const shown = await inlineImages(deps(files), tenant, 'emails', 'email_1', wanted);
    const foreign = await inlineImages(deps(files, 'acct_2'), tenant, 'emails', 'email_1', wanted);
    const bigHtml = await inlineImages(deps(files), tenant, 'emails', 'email_1', wanted, PREVIEW_MAX_CHARS - 1_300_000);

    expect([...shown.keys()]).toEqual(['a', 'b']);
    expect(shown.get('a')).toBe(`data:image/png;base64,${Buffer.from(files.a).toString('base64')}`);
    expect(foreign.size).toBe(0);
    // 1.3 M characters left: one 900 KB image (1.2 M in base64), not two.
    expect([...bigHtml.keys()]).toEqual(['a']);
  });
});
