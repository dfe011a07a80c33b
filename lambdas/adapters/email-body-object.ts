// An email body as one stored object (an S3 object on AWS, a file of the data directory locally): its key and its
// JSON, shared by both stores so the local stand-in holds exactly what S3 holds. No SDK here.
import * as z from 'zod';
import type { EmailBody } from '../app/emails/ports';

/** Where an email's objects live in the bucket (the prefix the functions' IAM policies name). */
export const EMAIL_OBJECTS_PREFIX = 'emails/';
export const bodyKey = (emailId: string) => `${EMAIL_OBJECTS_PREFIX}${emailId}/body.json`;
/** Headers as [name, value] pairs: a header may be named `__proto__`, which a JSON object would lose. */
const storedBody = z.object({
  html: z.string().optional(),
  text: z.string().optional(),
  headers: z.array(z.tuple([z.string(), z.string()])),
  expiresAt: z.number(),
});

export function encodeBody(body: EmailBody, expiresAt: number): string {
  return JSON.stringify({ html: body.html, text: body.text, headers: Object.entries(body.headers), expiresAt });
}

/** The body as stored, or null when its email's retention has passed (`nowMs`). */
export function decodeBody(json: string, nowMs: number): EmailBody | null {
  const { html, text, headers, expiresAt } = storedBody.parse(JSON.parse(json));
  if (expiresAt * 1000 <= nowMs) return null;
  const record: Record<string, string> = Object.create(null);
  for (const [name, value] of headers) record[name] = value;
  return { ...(html !== undefined ? { html } : {}), ...(text !== undefined ? { text } : {}), headers: record };
}
