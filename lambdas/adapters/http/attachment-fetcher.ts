// Fetches an attachment's `path` once, when its email is accepted: a GET through the webhook sender's SSRF guard
// (the URL checked, then every connection made through the guarded lookup, so the address connected to is the
// address checked), no redirects followed, at most `maxBytes` read, all within the caller's deadline. Every
// failure is a reason the caller sees in a 422, never a thrown error.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { AttachmentFetcher, FetchedAttachment } from '../../app/emails/ports';
import { checkWebhookUrl } from '../../domain/webhooks/address-guard';
import { AddressNotAllowedError, guardedLookup } from './guarded-lookup';

export interface HttpAttachmentFetcherOptions {
  /** SF_ALLOW_PRIVATE_WEBHOOKS: http and private addresses allowed (the local runtime, tests). */
  readonly allowPrivate: boolean;
}

export class HttpAttachmentFetcher implements AttachmentFetcher {
  private readonly lookup: LookupFunction;
  // No keep-alive: fetches are rare and to arbitrary hosts; nothing is worth holding open.
  private readonly http = new HttpAgent({ keepAlive: false });
  private readonly https = new HttpsAgent({ keepAlive: false });

  constructor(private readonly options: HttpAttachmentFetcherOptions) {
    this.lookup = guardedLookup(options.allowPrivate);
  }

  async fetch(raw: string, options: { maxBytes: number; signal: AbortSignal }): Promise<FetchedAttachment> {
    const check = checkWebhookUrl(raw, { allowPrivate: this.options.allowPrivate });
    if (!check.ok) return { ok: false, reason: `The URL ${check.reason}.` };
    const url = check.url;
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
      if (options.signal.aborted) return { ok: false, reason: 'Fetching the URL took too long.' };
      if (error instanceof AddressNotAllowedError)
        return { ok: false, reason: `The URL is not allowed (${error.message}).` };
      const code = (error as NodeJS.ErrnoException).code;
      return { ok: false, reason: `The URL could not be fetched${code ? ` (${code})` : ''}.` };
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
  return new Uint8Array(Buffer.concat(chunks));
}
