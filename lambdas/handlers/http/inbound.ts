// HTTP handlers for received (inbound) emails, as Resend's SDK reads them: GET /v1/emails/receiving (a page,
// newest first), /:id (body, headers, a download link of the raw message), /:id/attachments[/:aid] (download
// links). Scope email:read; another tenant's id is 404.
import * as z from 'zod';
import type { ReceivedAttachment, ReceivedEmail } from '../../app/inbound/ports';
import {
  type DownloadLink,
  getReceivedAttachment,
  getReceivedEmail,
  listReceivedAttachments,
  listReceivedEmails,
  type ReadReceivedDeps,
} from '../../app/inbound/read-received';
import { ValidationError } from '../../domain/errors';
import { RECEIVED_EMAIL_ID } from '../../domain/inbound';
import { omittedOf } from '../../domain/received-fields';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { receivedStatusFields } from './received-fields';
import { type Body, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const receivedId = z.string().regex(RECEIVED_EMAIL_ID, 'must be a received email id (rcv_…)');

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: receivedId.optional().meta({ description: 'A received email id: the page of older ones after it.' }),
  before: receivedId.optional().meta({ description: 'A received email id: the page of newer ones before it.' }),
});

const getQuery = z.strictObject({
  html_format: z.enum(['data_uri', 'cid']).optional().meta({
    description: 'Accepted for Resend compatibility; `html` is always returned as sent (cid: references kept).',
  }),
});

const verdict = z.enum(['pass', 'fail', 'gray', 'processing_failed']);
const inboundAttachment = named(
  'ReceivedAttachment',
  z.strictObject({
    id: z.string(),
    filename: z.string().nullable(),
    size: z.number().int(),
    content_type: z.string(),
    content_id: z.string().nullable(),
    content_disposition: z.enum(['inline', 'attachment']),
  }),
);
const listed = {
  id: z.string(),
  to: z.array(z.string()),
  from: z.string(),
  created_at: isoTime,
  subject: z.string().meta({ description: 'Decoded; data only (it may hold any character the sender put in it).' }),
  bcc: z.array(z.string()),
  cc: z.array(z.string()),
  reply_to: z.array(z.string()),
  received_for: z.array(z.string()).meta({ description: 'The envelope recipients at your domains.' }),
  message_id: z.string(),
  attachments: z.array(inboundAttachment),
  ...receivedStatusFields,
};
const listItem = named('ReceivedEmailSummary', z.strictObject(listed));
const downloadLink = { download_url: z.string(), expires_at: isoTime };
const receivedEmail = named(
  'ReceivedEmail',
  z.strictObject({
    object: z.literal('email'),
    ...listed,
    html: z.string().nullable().meta({
      description: 'As sent, scripts included: never render it outside a sandbox (an iframe with `sandbox` and a CSP).',
    }),
    text: z.string().nullable(),
    headers: z
      .record(z.string(), z.string())
      .meta({ description: 'Lower-case names; repeated headers joined by newlines.' }),
    raw: z.strictObject(downloadLink).meta({ description: 'The message as received (RFC 5322), for an hour.' }),
    verdicts: z
      .strictObject({ spam: verdict, virus: verdict, spf: verdict, dkim: verdict, dmarc: verdict })
      .nullable()
      .meta({ description: 'SES’s receipt verdicts on AWS; null locally (nothing judged the message).' }),
  }),
);
const attachmentData = {
  id: z.string(),
  filename: z.string().optional(),
  size: z.number().int(),
  content_type: z.string(),
  content_disposition: z.enum(['inline', 'attachment']),
  content_id: z.string().optional(),
  ...downloadLink,
};
const attachmentItem = named('ReceivedAttachmentDownload', z.strictObject(attachmentData));

const responses = {
  listReceivedEmails: success(
    200,
    named(
      'ReceivedEmailList',
      z.strictObject({ object: z.literal('list'), has_more: z.boolean(), data: z.array(listItem) }),
    ),
    'Received emails, newest first',
  ),
  getReceivedEmail: success(200, receivedEmail, 'The received email'),
  listReceivedAttachments: success(
    200,
    named(
      'ReceivedAttachmentList',
      z.strictObject({ object: z.literal('list'), has_more: z.literal(false), data: z.array(attachmentItem) }),
    ),
    'Its attachments with download links (each for an hour)',
  ),
  getReceivedAttachment: success(
    200,
    named('ReceivedAttachmentObject', z.strictObject({ object: z.literal('attachment'), ...attachmentData })),
    'The attachment with its download link (for an hour)',
  ),
} as const;

function summary(email: ReceivedEmail): Body<typeof listItem> {
  return {
    id: email.id,
    to: [...email.to],
    from: email.from,
    created_at: email.createdAt,
    subject: email.subject,
    bcc: [...email.bcc],
    cc: [...email.cc],
    reply_to: [...email.replyTo],
    received_for: [...email.receivedFor],
    message_id: email.messageId,
    attachments: email.attachments.map((attachment) => ({
      id: attachment.id,
      filename: attachment.filename,
      size: attachment.size,
      content_type: attachment.contentType,
      content_id: attachment.contentId,
      content_disposition: attachment.contentDisposition,
    })),
    status: email.status ?? 'received',
    notes: (email.notes ?? []).map((note) => ({ code: note.code, message: note.message })),
    omitted: omittedOf(email),
  };
}

function download(attachment: ReceivedAttachment, link: DownloadLink) {
  return {
    id: attachment.id,
    ...(attachment.filename !== null ? { filename: attachment.filename } : {}),
    size: attachment.size,
    content_type: attachment.contentType,
    content_disposition: attachment.contentDisposition,
    ...(attachment.contentId !== null ? { content_id: attachment.contentId } : {}),
    download_url: link.url,
    expires_at: link.expires_at,
  };
}

export function inboundHandlers(deps: ReadReceivedDeps) {
  const list: RouteHandler = async ({ caller, query }) => {
    const { limit, after, before } = validate(listQuery, query, 'query');
    if (after !== undefined && before !== undefined) {
      throw new ValidationError('Give after or before, not both.', {
        details: [{ path: 'before', message: 'Cannot be used with after.' }],
      });
    }
    const page = await listReceivedEmails(deps, tenantOf(caller), {
      limit,
      ...(after !== undefined ? { after } : {}),
      ...(before !== undefined ? { before } : {}),
    });
    return reply(responses.listReceivedEmails, {
      object: 'list',
      has_more: page.hasMore,
      data: page.emails.map(summary),
    });
  };
  const get: RouteHandler = async ({ caller, params, query }) => {
    validate(getQuery, query, 'query');
    const { email, body, raw } = await getReceivedEmail(deps, tenantOf(caller), params.id ?? '');
    return reply(responses.getReceivedEmail, {
      object: 'email',
      ...summary(email),
      html: body.html,
      text: body.text,
      headers: { ...body.headers },
      raw: { download_url: raw.url, expires_at: raw.expires_at },
      verdicts: email.verdicts,
    });
  };
  const attachments: RouteHandler = async ({ caller, params, query }) => {
    validate(attachmentsQuery, query, 'query');
    const found = await listReceivedAttachments(deps, tenantOf(caller), params.id ?? '');
    return reply(responses.listReceivedAttachments, {
      object: 'list',
      has_more: false,
      data: found.map(({ attachment, link }) => download(attachment, link)),
    });
  };
  const attachment: RouteHandler = async ({ caller, params }) => {
    const found = await getReceivedAttachment(deps, tenantOf(caller), params.id ?? '', params.attachmentId ?? '');
    return reply(responses.getReceivedAttachment, { object: 'attachment', ...download(found.attachment, found.link) });
  };
  return {
    listReceivedEmails: list,
    getReceivedEmail: get,
    listReceivedAttachments: attachments,
    getReceivedAttachment: attachment,
  };
}

/** The SDK's pagination options are accepted on the attachment list too; it is never more than one page. */
const attachmentsQuery = listQuery;

export const requestSchemas: RequestSchemas = {
  listReceivedEmails: { query: listQuery },
  getReceivedEmail: { query: getQuery },
  listReceivedAttachments: { query: attachmentsQuery },
};
export const responseSchemas: ResponseSchemas = responses;
