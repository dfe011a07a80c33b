// HTTP handlers for POST /v1/emails and /v1/emails/batch (spec §4.2, DESIGN §6), GET /v1/emails (the list),
// GET /v1/emails/:id and its cancel. A batch is validated whole: one bad email refuses them all, each problem
// reported with its index.
import * as z from 'zod';
import { type AttachmentInput, attachmentLinks } from '../../app/emails/attachments';
import type { ListEmailsDeps } from '../../app/emails/list-emails';
import { listEmails } from '../../app/emails/list-emails';
import { type EmailWithHistory, type ReadEmailDeps, readEmail, withHistory } from '../../app/emails/read-email';
import {
  cancelEmail,
  type EmailDraft,
  getEmail,
  rescheduleEmail,
  type SendEmailDeps,
  sendEmails,
} from '../../app/emails/send-emails';
import type { FileStore } from '../../app/files/ports';
import type { Principal } from '../../app/ports';
import type { TemplateRepository } from '../../app/templates/ports';
import type { TraceSpan } from '../../app/tracing';
import {
  ATTACHMENT_LIMITS,
  type AttachmentMeta,
  contentIdProblem,
  contentTypeProblem,
  decodeBase64,
  filenameProblem,
} from '../../domain/email/attachments';
import { addressProblem, bareAddress } from '../../domain/email/email';
import { EMAIL_LIMITS, parseHeaders, unsafeTextProblem } from '../../domain/email/limits';
import { parseScheduleTime, SCHEDULE_EXAMPLES, SCHEDULE_FORMS } from '../../domain/email/schedule-time';
import { EMAIL_STATUSES, emailStatus } from '../../domain/email/status';
import { listUnsubscribeHeaders } from '../../domain/email/unsubscribe';
import { InvalidAttachmentError, ValidationError } from '../../domain/errors';
import { summary } from '../../domain/field-problems';
import { type RequestSchemas, type ResponseSchemas, type RouteHandler, tenantOf } from './context';
import { checkWindow, idWindow, windowFields } from './list-filters';
import { type Body, isoTime, named, pageSchema, reply, success } from './response';
import { renderTemplatedBodies, templateField } from './templated-emails';
import { validate } from './validate';

const MAX_RECIPIENTS = EMAIL_LIMITS.recipients;
/** How far ahead scheduled_at may be. */
const MAX_SCHEDULE_MS = 30 * 24 * 60 * 60 * 1000;

/** A zod check from a rule that names its problem (or null), so the 422 says exactly what is wrong. */
export const rule =
  (problem: (value: string) => string | null) =>
  (value: string, ctx: z.RefinementCtx): void => {
    const message = problem(value);
    if (message) ctx.addIssue({ code: 'custom', message });
  };

const ADDRESS_EXAMPLE = 'E.g. a@example.com or "Name <a@example.com>".';
const TAG_TEXT = 'may hold only ASCII letters, digits, _ and - (1 to 256 of them).';

/** The value as the caller wrote it, quoted, cut at 80 characters (a 4xx message may show what was sent). */
const quoted = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);

/** `` `to[1]` is not an email address: "nope" (an address needs an @). E.g. … ``: the value, then the rule. */
export const address = z
  .string({
    error: (issue) =>
      issue.input === undefined
        ? `is required: an email address. ${ADDRESS_EXAMPLE}`
        : `must be an email address (a string). ${ADDRESS_EXAMPLE}`,
  })
  .trim()
  .superRefine(
    rule((value) => {
      const problem = addressProblem(value);
      if (!problem) return null;
      const why = `${problem[0]?.toLowerCase()}${problem.slice(1).replace(/\.$/, '')}`;
      return `is not an email address: ${quoted(value)} (${why}). ${ADDRESS_EXAMPLE}`;
    }),
  );

/**
 * One address or a list of 1 to `max` (of 0 to `max` with `orNone`: an empty cc, bcc or reply_to list is none, as
 * Resend takes it; resend-mcp sends reply_to: [] when no reply-to is configured). A value that is neither (a
 * number, null, an object, nothing) gets one message saying what is expected, instead of zod's "Invalid input"
 * for a failed union.
 */
export const addresses = (max: number, { orNone = false } = {}) =>
  z.union(
    [
      address.transform((a) => [a]),
      z
        .array(address)
        .min(orNone ? 0 : 1, 'must list at least one email address (the list is empty).')
        .max(max, `must list at most ${max} email addresses.`),
    ],
    {
      error: (issue) =>
        issue.input === undefined
          ? 'is required: an email address or a list of email addresses.'
          : 'must be an email address or a list of email addresses.',
    },
  );

/** Custom headers as SES v2 takes them (domain/email/limits.ts); the record has no prototype. */
const headers = z
  .unknown()
  .transform((input, ctx) => {
    const { headers, problems } = parseHeaders(input);
    for (const { name, message } of problems)
      ctx.addIssue({ code: 'custom', message, path: name === null ? [] : [name] });
    return headers;
  })
  .meta({
    type: 'object',
    description: `At most ${EMAIL_LIMITS.headers}; restricted names (From, To, Subject, List-Unsubscribe, X-SES-*, …) are refused.`,
    maxProperties: EMAIL_LIMITS.headers,
    propertyNames: { pattern: `^[!-9;-@A-~]{1,${EMAIL_LIMITS.headerName}}$` },
    additionalProperties: { type: 'string', pattern: `^[ -~]{1,${EMAIL_LIMITS.headerValue}}$` },
  });

/**
 * scheduled_at at `now`, on send and on PATCH alike: an ISO 8601 date-time with a time zone or words Resend
 * takes ("in 1 min", "tomorrow at 9am"; domain/email/schedule-time.ts), in the future and at most 30 days away.
 * The value is the instant as ISO 8601 UTC.
 */
const scheduledAt = (now: number) =>
  z
    .string({
      error: (issue) =>
        issue.input === undefined ? `is required: ${SCHEDULE_FORMS}.` : `must be a string: ${SCHEDULE_FORMS}.`,
    })
    .transform((text, ctx) => {
      const read = parseScheduleTime(text, now);
      if ('problem' in read) {
        ctx.addIssue({ code: 'custom', message: read.problem });
        return z.NEVER;
      }
      if (read.at <= now) {
        ctx.addIssue({
          code: 'custom',
          message: `must be in the future; ${JSON.stringify(text)} is ${new Date(read.at).toISOString()}.`,
        });
        return z.NEVER;
      }
      if (read.at > now + MAX_SCHEDULE_MS) {
        ctx.addIssue({
          code: 'custom',
          message: `must be at most 30 days from now; ${JSON.stringify(text)} is ${new Date(read.at).toISOString()}.`,
        });
        return z.NEVER;
      }
      return new Date(read.at).toISOString();
    })
    .meta({
      description: `When to send: an ISO 8601 date-time with a time zone, or words such as ${SCHEDULE_EXAMPLES.slice(1)
        .map((e) => `"${e}"`)
        .join(', ')} (UTC unless a zone is named). In the future, at most 30 days ahead.`,
      examples: ['2026-12-01T09:00:00Z', 'in 1 hour', 'tomorrow at 9am'],
    });

/** PATCH /v1/emails/:id (Resend's emails.update): a scheduled email's new send time. */
const updateBody = (now: number) => z.strictObject({ scheduled_at: scheduledAt(now) });
/**
 * One attachment: `filename` and exactly one of `content` (base64) or `path` (an https URL fetched once at
 * accept); `content_type` (else derived from the filename, or the URL's answer); `content_id` makes it inline.
 */
const attachment = z
  .strictObject({
    filename: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? 'is required: a file name such as "invoice.pdf".'
            : 'must be a file name (a string) such as "invoice.pdf".',
      })
      .superRefine(rule(filenameProblem)),
    content: z
      .string({ error: 'must be the file as a base64 string.' })
      .max(Math.ceil((ATTACHMENT_LIMITS.emailBytes * 4) / 3) + 4096, {
        error: `decodes to more than ${ATTACHMENT_LIMITS.emailBytes} bytes (the limit of an email's attachments together).`,
      })
      .optional()
      .meta({ description: 'The file, base64-encoded. Give content or path, not both.', contentEncoding: 'base64' }),
    path: z
      .url({ protocol: /^https?$/, error: 'must be an absolute https URL to fetch the file from.' })
      .max(ATTACHMENT_LIMITS.url)
      .optional()
      .meta({
        description:
          'An https URL fetched once when the email is accepted (public addresses only, no redirects, within the size limit). Give content or path, not both.',
      }),
    content_type: z.string().superRefine(rule(contentTypeProblem)).optional(),
    content_id: z.string().superRefine(rule(contentIdProblem)).optional().meta({
      description: 'Makes it an inline part (Content-Disposition: inline); the HTML shows it as cid:<content_id>.',
    }),
  })
  .superRefine((a, ctx) => {
    if ((a.content === undefined) === (a.path === undefined)) {
      ctx.addIssue({
        code: 'custom',
        message: 'Give exactly one of `content` (base64) or `path` (a URL).',
        path: [],
      });
    }
  })
  .transform((a, ctx): AttachmentInput => {
    const content = a.content === undefined ? undefined : decodeBase64(a.content);
    if (content === null) {
      ctx.addIssue({ code: 'custom', message: 'is not base64.', path: ['content'] });
      return z.NEVER;
    }
    return {
      filename: a.filename,
      ...(content !== undefined ? { content } : {}),
      ...(a.path !== undefined ? { path: a.path } : {}),
      ...(a.content_type !== undefined ? { contentType: a.content_type } : {}),
      ...(a.content_id !== undefined ? { contentId: a.content_id } : {}),
    };
  });

const attachments = z
  .array(attachment)
  .max(ATTACHMENT_LIMITS.perEmail, `must list at most ${ATTACHMENT_LIMITS.perEmail} attachments.`)
  .superRefine((list, ctx) => {
    const total = list.reduce((sum, a) => sum + (a.content?.byteLength ?? 0), 0);
    if (total > ATTACHMENT_LIMITS.emailBytes) {
      ctx.addIssue({
        code: 'custom',
        message: `The attachments of an email are at most ${ATTACHMENT_LIMITS.emailBytes} bytes together (decoded); these are ${total}.`,
      });
    }
    const ids = list.flatMap((a) => (a.contentId ? [a.contentId] : []));
    if (new Set(ids).size !== ids.length)
      ctx.addIssue({ code: 'custom', message: 'Each `content_id` may be used once.' });
  });

/** An email's fields at `now` (scheduled_at in the future and at most 30 days away). */
const emailFields = (now: number) => ({
  from: address,
  to: addresses(MAX_RECIPIENTS),
  subject: z.string().min(1).max(EMAIL_LIMITS.subject).superRefine(rule(unsafeTextProblem)),
  html: z.string().optional(),
  text: z.string().optional(),
  cc: addresses(MAX_RECIPIENTS, { orNone: true }).optional(),
  bcc: addresses(MAX_RECIPIENTS, { orNone: true }).optional(),
  reply_to: addresses(10, { orNone: true }).optional(),
  headers: headers.optional(),
  tags: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, TAG_TEXT),
        value: z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, TAG_TEXT),
      }),
    )
    .max(50, 'must list at most 50 tags.')
    .optional(),
  scheduled_at: scheduledAt(now).optional(),
  attachments: attachments.optional(),
});

/** The email schema at `now`: scheduled_at must be in the future and at most 30 days away. */
export const emailBody = (now: number) =>
  z
    .strictObject(emailFields(now))
    .refine((e) => e.html !== undefined || e.text !== undefined, {
      message: 'Give `html` or `text` (or both): the email needs a body.',
      path: ['html'],
    })
    .refine((e) => e.to.length + (e.cc?.length ?? 0) + (e.bcc?.length ?? 0) <= MAX_RECIPIENTS, {
      message: `At most ${MAX_RECIPIENTS} recipients across \`to\`, \`cc\` and \`bcc\`.`,
      path: ['to'],
    })
    .transform(
      (e): EmailDraft => ({
        from: e.from,
        to: e.to,
        cc: e.cc ?? [],
        bcc: e.bcc ?? [],
        replyTo: e.reply_to ?? [],
        subject: e.subject,
        ...(e.html !== undefined ? { html: e.html } : {}),
        ...(e.text !== undefined ? { text: e.text } : {}),
        headers: e.headers ?? Object.create(null),
        tags: e.tags ?? [],
        ...(e.attachments?.length ? { attachments: e.attachments } : {}),
        ...(e.scheduled_at !== undefined ? { scheduledAt: e.scheduled_at } : {}),
      }),
    );

/** GET /v1/emails: newest first, `after` an email id (older ones), filtered by status and by a recipient. */
const listQuery = z
  .strictObject({
    status: z.enum(EMAIL_STATUSES as [string, ...string[]]).optional(),
    to: z
      .string()
      .trim()
      .superRefine(
        rule((value) => (/[<>]/.test(value) ? 'Give a bare address, e.g. a@example.com.' : addressProblem(value))),
      )
      .transform(bareAddress)
      .optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    after: z
      .string()
      .regex(/^email_[0-9a-z]{10,60}$/, 'must be an email id (email_…).')
      .optional(),
    ...windowFields('emails created'),
  })
  .superRefine(checkWindow);

/**
 * What the OpenAPI document publishes for a send: the email's fields, and `template` (docs/templates.md) instead
 * of html and text, with from and subject then optional (the template's defaults fill them). Requests are judged
 * by renderTemplatedBodies, then emailBody.
 */
const sendSchema = (now: number) =>
  z
    .strictObject({
      ...emailFields(now),
      from: address.optional().meta({ description: 'Required, unless a template with a default from is used.' }),
      subject: z
        .string()
        .min(1)
        .max(EMAIL_LIMITS.subject)
        .optional()
        .meta({ description: 'Required, unless a template with a default subject is used.' }),
      template: templateField.optional(),
    })
    .meta({ description: 'An email: html or text (or both), or a published template with its variables.' });

const batchBody = (now: number) =>
  z
    .array(emailBody(now))
    .min(1, 'must list at least one email.')
    .max(100, 'must list at most 100 emails (a batch takes 1 to 100).');

const attachmentFields = {
  id: z.string(),
  filename: z.string(),
  size: z.number().int().meta({ description: 'Bytes, decoded.' }),
  content_type: z.string(),
  content_disposition: z.enum(['attachment', 'inline']),
  content_id: z.string().nullable().meta({ description: 'Set for an inline part (cid:<content_id> in the HTML).' }),
};
const attachmentSchema = named('EmailAttachment', z.strictObject(attachmentFields));
const attachmentLinkSchema = named(
  'EmailAttachmentLink',
  z.strictObject({
    object: z.literal('attachment'),
    ...attachmentFields,
    content_id: z.string().optional().meta({
      description: "Inline parts only (cid:<content_id> in the HTML); absent otherwise, as in Resend's answers.",
    }),
    download_url: z.string().meta({ description: 'Downloads the file (no API key); works until expires_at.' }),
    expires_at: isoTime,
  }),
);
const attachmentList = named(
  'EmailAttachmentList',
  z.strictObject({ object: z.literal('list'), has_more: z.boolean(), data: z.array(attachmentLinkSchema) }),
);
/** GET /v1/emails/:id/attachments takes the SDK's pagination query; an email has at most 20, so one page. */
const attachmentListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  after: z.string().max(100).optional(),
  before: z.string().max(100).optional(),
});

const emailSchema = named(
  'Email',
  z.strictObject({
    object: z.literal('email'),
    id: z.string(),
    from: z.string(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    reply_to: z.array(z.string()),
    subject: z.string(),
    status: z.string().meta({
      description:
        'From the latest event: queued, scheduled, sent, delivery_delayed, delivered, opened, clicked, bounced, ' +
        'complained, failed, suppressed, …; canceled once canceled.',
    }),
    last_event: z.string().meta({ description: "The same as status, where Resend's SDK reads it." }),
    scheduled_at: isoTime.nullable(),
    canceled_at: isoTime
      .nullable()
      .meta({ description: 'When it was canceled (POST …/cancel); null unless canceled.' }),
    recipient_headers: z
      .record(z.string(), z.record(z.string(), z.string()))
      .meta({ description: "By recipient: the List-Unsubscribe headers that recipient's copy carries (RFC 8058)." }),
    suppressed: z.array(z.string()).meta({ description: 'Recipients not sent to: on the suppression list.' }),
    created_at: isoTime,
    tags: z.array(z.strictObject({ name: z.string(), value: z.string() })),
    template_id: z
      .string()
      .nullable()
      .meta({ description: 'The template it was rendered from (sent with `template`); null when it had none.' }),
    html: z.string().nullable().meta({ description: 'The HTML body as sent; null when it had none.' }),
    text: z.string().nullable().meta({ description: 'The plain-text body as sent; null when it had none.' }),
    events: z.array(
      z.strictObject({
        id: z.string(),
        type: z.string().meta({ description: 'An event type (EventType).' }),
        to: z.string().nullable(),
        timestamp: isoTime,
      }),
    ),
    events_truncated: z.boolean().meta({ description: 'Older events were left out.' }),
    attachments: z.array(attachmentSchema).meta({ description: 'Its attachments (metadata; download them below).' }),
  }),
);

/** An email in GET /v1/emails: the Email without its history and bodies (one GET /v1/emails/:id away). */
const emailSummarySchema = named(
  'EmailSummary',
  emailSchema.omit({ events: true, events_truncated: true, html: true, text: true, attachments: true }),
);

const emailList = pageSchema('EmailList', emailSummarySchema, 'emails examined');

const emailId = z.strictObject({ id: z.string() });

/** What Resend's update and cancel answer, and all a key that cannot read emails is told of one it acted on. */
const emailRefSchema = named('EmailRef', z.strictObject({ object: z.literal('email'), id: z.string() }));
/** The answer of update and cancel: the whole email to a key with email:read, else the reference alone. */
const emailActedOnSchema = named(
  'EmailActedOn',
  z.union([emailSchema, emailRefSchema]),
  'The whole Email to a key with email:read; only the EmailRef to a key without it (a sending key).',
);

const responses = {
  sendEmail: success(200, named('EmailAccepted', emailId), 'Accepted: the id of the email'),
  sendEmailBatch: success(
    200,
    named('EmailBatchAccepted', z.strictObject({ data: z.array(emailId) })),
    'Accepted: the ids, in the order sent',
  ),
  getEmail: success(200, emailSchema, 'The email: status, recipients, event history'),
  listEmails: success(200, emailList, 'A page of emails, newest first'),
  cancelEmail: success(
    200,
    emailActedOnSchema,
    'The email, canceled (only `{object, id}` to a key without email:read)',
  ),
  updateEmail: success(
    200,
    emailActedOnSchema,
    'The email, with its new scheduled_at (only `{object, id}` to a key without email:read)',
  ),
  listEmailAttachments: success(200, attachmentList, "The email's attachments, each with a download link"),
  getEmailAttachment: success(200, attachmentLinkSchema, 'One attachment with a download link'),
} as const;

export function emailHandlers(
  deps: SendEmailDeps &
    ReadEmailDeps &
    ListEmailsDeps & {
      files: Pick<FileStore, 'downloadUrl'>;
      templates: TemplateRepository;
      maxSendBodyBytes?: number;
    },
) {
  const send: RouteHandler = async ({ caller, body, span }) => {
    const rendered = await renderTemplatedBodies(deps, tenantOf(caller), body ?? {}, false);
    const draft = withTemplate(validateEmails(emailBody(deps.clock.now()), rendered.body), rendered.templateIds[0]);
    const [id] = await sendEmails(deps, caller, [draft], { batch: false, ...traced(span) });
    span?.setAttributes({ 'sendflow.email.id': id ?? '' });
    return reply(responses.sendEmail, { id: id ?? '' });
  };
  const batch: RouteHandler = async ({ caller, body, span }) => {
    const rendered = await renderTemplatedBodies(deps, tenantOf(caller), body ?? [], true);
    const drafts = validateEmails(batchBody(deps.clock.now()), rendered.body).map((draft, i) =>
      withTemplate(draft, rendered.templateIds[i]),
    );
    const ids = await sendEmails(deps, caller, drafts, { batch: true, ...traced(span) });
    span?.setAttributes({ 'sendflow.email.count': ids.length });
    return reply(responses.sendEmailBatch, { data: ids.map((id) => ({ id })) });
  };
  const get: RouteHandler = async ({ caller, params }) =>
    reply(responses.getEmail, emailView(await readEmail(deps, tenantOf(caller), params.id ?? '')));
  const list: RouteHandler = async ({ caller, query }) => {
    const { limit, to, status, ...rest } = validate(listQuery, query, 'query');
    const page = await listEmails(deps, tenantOf(caller), {
      limit,
      ...idWindow('email', rest),
      ...(to !== undefined ? { to } : {}),
      ...(status !== undefined ? { status } : {}),
    });
    return reply(responses.listEmails, {
      object: 'list',
      has_more: page.hasMore,
      next_after: page.nextAfter,
      data: page.items.map(emailListView),
    });
  };
  // The email as GET shows it, to a key that may read it; `{object, id}` to one that may only send (a sending key).
  const canRead = (caller: Principal) => caller.scopes.includes('email:read');
  const cancel: RouteHandler = async ({ caller, params }) => {
    const id = params.id ?? '';
    const canceled = await cancelEmail(deps, caller, id);
    return reply(
      responses.cancelEmail,
      canRead(caller) ? emailView(await withHistory(deps, canceled)) : { object: 'email', id },
    );
  };
  const update: RouteHandler = async ({ caller, params, body }) => {
    const { scheduled_at } = validate(updateBody(deps.clock.now()), body ?? {});
    const id = params.id ?? '';
    await rescheduleEmail(deps, caller, id, scheduled_at);
    // Read whole after the move (body, links and history): the answer is the email as GET shows it now.
    return reply(
      responses.updateEmail,
      canRead(caller) ? emailView(await readEmail(deps, tenantOf(caller), id)) : { object: 'email', id },
    );
  };
  const attachmentsOf: RouteHandler = async ({ caller, params, query }) => {
    validate(attachmentListQuery, query, 'query');
    // The email with its body (where the attachments' metadata is), without its history: one read fewer.
    const email = await getEmail(deps, tenantOf(caller), params.id ?? '');
    const links = await attachmentLinks(deps, email);
    return reply(responses.listEmailAttachments, { object: 'list', has_more: false, data: links.map(linkView) });
  };
  const attachmentOf: RouteHandler = async ({ caller, params }) => {
    const email = await getEmail(deps, tenantOf(caller), params.id ?? '');
    const [link] = await attachmentLinks(deps, email, params.attachmentId ?? '');
    return reply(responses.getEmailAttachment, linkView(link as AttachmentMeta & { url: string; expires_at: string }));
  };
  return {
    sendEmail: send,
    sendEmailBatch: batch,
    getEmail: get,
    listEmails: list,
    cancelEmail: cancel,
    updateEmail: update,
    listEmailAttachments: attachmentsOf,
    getEmailAttachment: attachmentOf,
  };
}

/** The draft of an email rendered from a template, marked with its id (stored, on GET, on every event). */
const withTemplate = (draft: EmailDraft, templateId: string | undefined): EmailDraft =>
  templateId ? { ...draft, templateId } : draft;

/**
 * The body validated; when every problem is an attachment's, the 422 says `invalid_attachment` (the code a
 * caller branches on), with the same details.
 */
function validateEmails<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  try {
    return validate(schema, input);
  } catch (error) {
    const details = error instanceof ValidationError ? (error.details ?? []) : [];
    const onlyAttachments = details.length > 0 && details.every((d) => /(^|\.)attachments(\.|$)/.test(d.path));
    if (onlyAttachments) throw new InvalidAttachmentError(summary(details), { details });
    throw error;
  }
}

function attachmentView(meta: AttachmentMeta): Body<typeof attachmentSchema> {
  return {
    id: meta.id,
    filename: meta.filename,
    size: meta.size,
    content_type: meta.contentType,
    content_disposition: meta.disposition,
    content_id: meta.contentId ?? null,
  };
}

function linkView(link: AttachmentMeta & { url: string; expires_at: string }): Body<typeof attachmentLinkSchema> {
  const { content_id, ...fields } = attachmentView(link);
  return {
    object: 'attachment',
    ...fields,
    ...(content_id !== null ? { content_id } : {}),
    download_url: link.url,
    expires_at: link.expires_at,
  };
}

/**
 * An email as GET /v1/emails/:id shows it: status from its history, and the newest events of that history
 * (oldest of them first); `events_truncated` says older events were left out.
 */
export function emailView({ email, history }: EmailWithHistory): Body<typeof emailSchema> {
  const status = emailStatus({ events: history.events, ...(email.canceledAt ? { canceledAt: email.canceledAt } : {}) });
  return {
    object: 'email',
    id: email.id,
    from: email.from,
    to: email.to,
    cc: email.cc,
    bcc: email.bcc,
    reply_to: email.replyTo,
    subject: email.subject,
    status,
    last_event: status,
    scheduled_at: email.scheduledAt ?? null,
    canceled_at: email.canceledAt ?? null,
    // What each recipient's copy carries (RFC 8058), recorded for simulated sends too.
    recipient_headers: Object.fromEntries(
      Object.entries(email.unsubscribeUrls).map(([to, url]) => [to, listUnsubscribeHeaders(url)]),
    ),
    suppressed: email.suppressed,
    created_at: email.createdAt,
    tags: email.tags,
    template_id: email.templateId ?? null,
    html: email.html ?? null,
    text: email.text ?? null,
    events: history.events.map((e) => ({ id: e.id, type: e.type, to: e.to ?? null, timestamp: e.timestamp })),
    events_truncated: history.truncated,
    attachments: (email.attachments ?? []).map(attachmentView),
  };
}

/**
 * An email in GET /v1/emails: as GET /v1/emails/:id shows it without `events` and `events_truncated` (its status
 * is still from its history); the history itself is one GET /v1/emails/:id away.
 */
export function emailListView(email: EmailWithHistory): Body<typeof emailSummarySchema> {
  const {
    events: _events,
    events_truncated: _truncated,
    html: _html,
    text: _text,
    attachments: _attachments,
    ...view
  } = emailView(email);
  return view;
}

export const requestSchemas: RequestSchemas = {
  listEmails: { query: listQuery },
  listEmailAttachments: { query: attachmentListQuery },
  sendEmail: { body: sendSchema(0) },
  sendEmailBatch: { body: z.array(sendSchema(0)).min(1).max(100) },
  updateEmail: { body: updateBody(0) },
};
export const responseSchemas: ResponseSchemas = responses;

/** The request's trace context for the emails it accepts (none when untraced). */
function traced(span: TraceSpan | undefined): { trace?: string } {
  return span?.trace !== undefined ? { trace: span.trace } : {};
}
