// Use case: the inline images of an email's HTML for the dashboard's preview (`<img src="cid:logo">`): the
// attachments whose Content-ID the HTML names, read from the file store and handed back as `data:` URLs. The
// preview is a sandboxed frame (an opaque origin): it sends no cookie, so it could not load an image from a
// signed-in route; and its CSP lets it fetch nothing but `data:` images (no open counted, nothing of the sender's
// reaches the network). Only raster images whose bytes say so (PNG, JPEG, GIF, WebP) are inlined, whatever type
// the sender declared: never SVG (it can hold script) or HTML. Bounded: 1 MB an image, 2 MB a preview, and the
// HTML and its images within PREVIEW_MAX_CHARS; the rest stay placeholders naming the attachment.
import { attachmentKey } from '../../domain/email/attachments';
import type { EmailRepository } from '../emails/ports';
import type { FileStore } from '../files/ports';
import type { ReceivedEmailRepository } from '../inbound/ports';
import type { Tenant } from '../webhooks/ports';

export const INLINE_IMAGE_MAX_BYTES = 1_000_000;
export const INLINE_IMAGES_MAX_BYTES = 2_000_000;
/**
 * The most characters a preview answer holds, its HTML and its images (base64: 4 characters per 3 bytes) together:
 * under Lambda's 6 MB response with room for the headers.
 */
export const PREVIEW_MAX_CHARS = 5_000_000;

export interface InlineImageDeps {
  readonly emails: Pick<EmailRepository, 'get'>;
  readonly receivedEmails: Pick<ReceivedEmailRepository, 'get'>;
  readonly files: Pick<FileStore, 'get'>;
}

/** A sent email (`emails`) or a received one (`received`). */
export type InlineImageSource = 'emails' | 'received';

interface Candidate {
  readonly contentId: string;
  readonly key: string;
  readonly size: number;
}

/** The image type the bytes are, by their signature; null for anything else (SVG, HTML, a lie). */
export function rasterImageType(bytes: Uint8Array): string | null {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (starts(0x52, 0x49, 0x46, 0x46) && [0x57, 0x45, 0x42, 0x50].every((b, i) => bytes[8 + i] === b))
    return 'image/webp';
  return null;
}

const bare = (contentId: string) => contentId.replace(/^<|>$/g, '');

/**
 * Content-ID (without `<>`) → `data:` URL of each inline image of the caller's email that `wanted` names (the
 * cid: URLs of its HTML); none for an email that is not the caller's.
 */
export async function inlineImages(
  deps: InlineImageDeps,
  tenant: Tenant,
  source: InlineImageSource,
  emailId: string,
  wanted: ReadonlySet<string>,
  htmlChars = 0,
): Promise<Map<string, string>> {
  const budget = Math.min(INLINE_IMAGES_MAX_BYTES, Math.floor(((PREVIEW_MAX_CHARS - htmlChars) * 3) / 4));
  const candidates = (await candidatesOf(deps, tenant, source, emailId)).filter(
    (c) => wanted.has(c.contentId) && c.size <= INLINE_IMAGE_MAX_BYTES,
  );
  const images = new Map<string, string>();
  let total = 0;
  for (const candidate of candidates) {
    if (images.has(candidate.contentId) || total + candidate.size > budget) continue;
    const file = await deps.files.get(candidate.key);
    if (!file || file.bytes.length > INLINE_IMAGE_MAX_BYTES) continue;
    const type = rasterImageType(file.bytes);
    if (!type) continue;
    total += file.bytes.length;
    images.set(candidate.contentId, `data:${type};base64,${Buffer.from(file.bytes).toString('base64')}`);
  }
  return images;
}

async function candidatesOf(
  deps: InlineImageDeps,
  tenant: Tenant,
  source: InlineImageSource,
  emailId: string,
): Promise<Candidate[]> {
  if (source === 'emails') {
    const email = await deps.emails.get(emailId);
    // Another tenant's email: none of its images (the API already answered 404 for it).
    if (!email || email.accountId !== tenant.accountId || email.mode !== tenant.mode) return [];
    return (email.attachments ?? []).flatMap((a) =>
      a.contentId ? [{ contentId: bare(a.contentId), key: attachmentKey(email.id, a.id), size: a.size }] : [],
    );
  }
  const received = await deps.receivedEmails.get(tenant, emailId);
  if (!received) return [];
  return received.attachments.flatMap((a) =>
    a.contentId ? [{ contentId: bare(a.contentId), key: a.key, size: a.size }] : [],
  );
}
