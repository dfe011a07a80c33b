// Fetches an attachment's `path` once, when its email is accepted: a GET through the webhook sender's SSRF guard
// (the URL checked, then every connection made through the guarded lookup, so the address connected to is the
// address checked), no redirects followed, at most `maxBytes` read, all within the caller's deadline. Every
// failure is a reason the caller sees in a 422, never a thrown error. Unlike a webhook, the body comes back to
// the caller (as a downloadable file), so: metadata/link-local addresses are refused even where private URLs are
// allowed, only port 443 is reached unless they are, and reasons never tell a refused connection from a reset or
// a bad certificate, nor name what a host resolved to (the 422s would otherwise map a network).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AttachmentFetcher, FetchedAttachment } from '../../app/emails/ports';
import { checkWebhookUrl, isMetadataAddress } from '../../domain/webhooks/address-guard';
import { ownBytes } from '../own-bytes';
import { AddressNotAllowedError, guardedLookup } from './guarded-lookup';

export interface HttpAttachmentFetcherOptions {
  /**
   * SF_ALLOW_PRIVATE_ATTACHMENT_URLS (its own setting, off by default everywhere): http, private addresses and any
   * port allowed (tests fetching from a loopback server). Metadata and link-local addresses stay refused.
   */
  readonly allowPrivate: boolean;
}

const REASONS = {
  private: 'The URL must not point to a private, loopback or reserved address.',
  metadata: 'The URL must not point to a link-local or cloud metadata address.',
  port: 'The URL must use https on port 443 (no other port).',
  failed: 'The URL could not be fetched (no connection, or TLS failed).',
  slow: 'Fetching the URL took too long.',
} as const;

export class HttpAttachmentFetcher implements AttachmentFetcher {
  private readonly lookup: LookupFunction;
  // No keep-alive: fetches are rare and to arbitrary hosts; nothing is worth holding open.
  private readonly http = new HttpAgent({ keepAlive: false });
  private readonly https = new HttpsAgent({ keepAlive: false });

  constructor(private readonly options: HttpAttachmentFetcherOptions) {
    this.lookup = guardedLookup(options.allowPrivate, isMetadataAddress);
  }

  async fetch(raw: string, options: { maxBytes: number; signal: AbortSignal }): Promise<FetchedAttachment> {
    const check = checkWebhookUrl(raw, { allowPrivate: this.options.allowPrivate });
    if (!check.ok) return { ok: false, reason: `The URL ${check.reason}.` };
    const url = check.url;
    if (isMetadataAddress(url.hostname.replace(/^\[|\]$/g, ''))) return { ok: false, reason: REASONS.metadata };
    // https's default port only (the URL parser elides an explicit :443).
    if (!this.options.allowPrivate && url.port !== '') return { ok: false, reason: REASONS.port };
    try {
      const res = await this.get(url, options.signal);
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        res.destroy();
        return { ok: false, reason: `The URL answered ${status} (a redirect); redirects are not followed.` };
      }
      if (status !== 200) {
        res.destroy();
        return { ok: false, reason: `The URL answered HTTP ${status}; 200 is needed.` };
      }
      const declared = Number(res.headers['content-length']);
      if (declared > options.maxBytes) {
        res.destroy();
        return { ok: false, reason: tooLarge(options.maxBytes) };
      }
      const bytes = await readAtMost(res, options.maxBytes);
      if (!bytes) return { ok: false, reason: tooLarge(options.maxBytes) };
      const type = res.headers['content-type']?.split(';')[0]?.trim();
      return { ok: true, bytes, ...(type ? { contentType: type } : {}) };
    } catch (error) {
      if (options.signal.aborted) return { ok: false, reason: REASONS.slow };
      if (error instanceof AddressNotAllowedError) {
        return { ok: false, reason: isMetadataAddress(error.address) ? REASONS.metadata : REASONS.private };
      }
      return { ok: false, reason: REASONS.failed };
    }
  }

  private get(url: URL, signal: AbortSignal): Promise<IncomingMessage> {
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: 'GET',
          headers: { 'User-Agent': 'Sendflow-Attachments/1', Accept: '*/*' },
          agent: secure ? this.https : this.http,
          lookup: this.lookup,
          signal,
        },
        resolve,
      );
      req.on('error', reject);
      req.end();
    });
  }
}

const tooLarge = (max: number) =>
  `The file at the URL is larger than ${max} bytes (what is left of the email's attachment limit).`;

/** The body, or null as soon as it passes `max` bytes (the connection is then dropped). */
async function readAtMost(res: IncomingMessage, max: number): Promise<Uint8Array | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res) {
    size += (chunk as Buffer).length;
    if (size > max) {
      res.destroy();
      return null;
    }
    chunks.push(chunk as Buffer);
  }
  return ownBytes(Buffer.concat(chunks, size));
}
