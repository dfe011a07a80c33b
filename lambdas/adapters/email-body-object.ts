// An email body as one stored object (an S3 object on AWS, DynamoDB's `body` item's binary, a file of the data
// directory locally): its key and its bytes, gzip of its JSON, shared by every store so the local stand-in holds
// exactly what S3 holds. Compressed because every store bills by size (DynamoDB 1 WRU a KB written, storage and
// PITR; S3 storage), and email HTML, whose markup and styles repeat, shrinks several times over. No SDK here.
import { gunzipSync, gzipSync } from 'node:zlib';
import * as z from 'zod';
import type { EmailBody } from '../app/emails/ports';

/** Where an email's objects live in the bucket (the prefix the functions' IAM policies name). */
export const EMAIL_OBJECTS_PREFIX = 'emails/';
export const bodyKey = (emailId: string) => `${EMAIL_OBJECTS_PREFIX}${emailId}/body.json`;
/** Headers as [name, value] pairs: a header may be named `__proto__`, which a JSON object would lose. */
const storedAttachment = z.object({
  id: z.string(),
  filename: z.string(),
  size: z.number(),
  contentType: z.string(),
  disposition: z.enum(['attachment', 'inline']),
  contentId: z.string().optional(),
});
const storedBody = z.object({
  html: z.string().optional(),
  text: z.string().optional(),
  headers: z.array(z.tuple([z.string(), z.string()])),
  attachments: z.array(storedAttachment).optional(),
  expiresAt: z.number(),
});

export function encodeBody(body: EmailBody, expiresAt: number): Buffer {
  const json = JSON.stringify({
    html: body.html,
    text: body.text,
    headers: Object.entries(body.headers),
    attachments: body.attachments?.length ? body.attachments : undefined,
    expiresAt,
  });
  return gzipSync(json);
}

/**
 * The most a stored body inflates to: an email takes at most 256 KB as stored, and JSON escaping at most six
 * times that. A larger object is not one we wrote (a gzip bomb placed in the store): inflating stops there.
 */
const MAX_BODY_JSON_BYTES = 2 * 1024 * 1024;

/** gzip's magic bytes; a body stored before compression is JSON text, which starts with `{`. */
const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b;

/** The body as stored (compressed, or JSON from before), or null when its email's retention has passed (`nowMs`). */
export function decodeBody(stored: Uint8Array | string, nowMs: number): EmailBody | null {
  const json =
    typeof stored === 'string'
      ? stored
      : (isGzip(stored) ? gunzipSync(stored, { maxOutputLength: MAX_BODY_JSON_BYTES }) : Buffer.from(stored)).toString(
          'utf8',
        );
  const { html, text, headers, attachments, expiresAt } = storedBody.parse(JSON.parse(json));
  if (expiresAt * 1000 <= nowMs) return null;
  const record: Record<string, string> = Object.create(null);
  for (const [name, value] of headers) record[name] = value;
  return {
    ...(html !== undefined ? { html } : {}),
    ...(text !== undefined ? { text } : {}),
    headers: record,
    ...(attachments?.length ? { attachments } : {}),
  };
}
