// Every field of the OpenAPI document gets a description and an example (the reference page shows both). A
// field's own zod `.meta({ description, example })` wins; a field without one takes the glossary's words for its
// name here (`Schema.field` first, then the name alone), or the one description its name has elsewhere in the
// document; its example is the glossary's, else one made from its schema (enum, const, format, type).

type JsonSchema = Record<string, unknown>;

interface FieldDoc {
  readonly description?: string;
  readonly example?: unknown;
}

const TIME = '2026-03-07T15:02:11.000Z';

/** By field name (or `Parent.field`, the component schema or operation it belongs to). */
const FIELDS: Readonly<Record<string, FieldDoc>> = {
  object: { description: 'What kind of object this is (its type name, as Resend spells it).' },
  id: { description: 'The object’s id, with its type’s prefix.' },
  created_at: { description: 'When it was created (ISO 8601, UTC).', example: TIME },
  webhook_id: { description: 'The webhook’s id.', example: 'wh_01jdq6x5r7m8v0a2b3c4d5e6f7' },
  updated_at: { description: 'When it last changed (ISO 8601, UTC).', example: TIME },
  revoked_at: { description: 'When the key was revoked; null while it works.', example: TIME },
  revoked: { description: 'true: the key no longer authenticates.' },
  name: { description: 'A name you gave it, shown in lists and the dashboard.', example: 'backend' },
  mode: { description: 'live or test: test-mode data never meets live-mode data.', example: 'test' },
  scopes: { description: 'What the key may do (email:send, email:read, domain:read, webhook:read, webhook:write).' },
  active: { description: 'false: the webhook is paused (by you, or disabled by Sendflow), and nothing is delivered.' },
  alias: { description: 'A second, stable name to use in place of the id.', example: 'order-confirmation' },
  at: { description: 'When the attempt started (ISO 8601, UTC).', example: TIME },
  attempt_log: { description: 'The attempts made, oldest first (the last 50).' },
  attempts: { description: 'How many attempts were made so far.', example: 1 },
  max_attempts: { description: 'How many automatic attempts the delivery gets in all.', example: 6 },
  body: { description: 'The raw body your endpoint received, exactly (a string, not parsed JSON).' },
  account: { description: 'The whole account’s figures and standing.' },
  domains: { description: 'Each sending domain’s figures and standing.' },
  attachment_bytes_today: { description: 'Attachment bytes accepted today, against the plan’s daily limit.' },
  inbound_bytes_today: { description: 'Inbound bytes received today, against the plan’s daily limit.' },
  test_recipients_today: { description: 'Test-mode recipients today, against the daily test quota.' },
  live_emails_this_month: { description: 'Live emails this month, against the plan’s monthly quota.' },
  connect_ms: { description: 'Milliseconds to open the TCP connection; null when reused or not reached.', example: 3 },
  dns_ms: { description: 'Milliseconds to resolve the endpoint’s host; null when not reached.', example: 1 },
  tls_ms: { description: 'Milliseconds of the TLS handshake; null over http or when not reached.', example: 12 },
  ttfb_ms: { description: 'Milliseconds until the first byte of the answer; null without one.', example: 40 },
  timings: { description: 'Where the attempt’s time went, phase by phase.' },
  content_disposition: { description: 'attachment, or inline (shown in the body through its content_id).' },
  content_type: { description: 'The file’s MIME type.', example: 'application/pdf' },
  filename: { description: 'The file’s name, as sent.', example: 'invoice.pdf' },
  delivered_at: { description: 'When the endpoint answered 2xx; null until then.', example: TIME },
  delivery: { description: 'The delivery this made or changed.' },
  description: { description: 'Words you gave it, or that describe it.' },
  diagnosis: { description: 'Why the signature does or does not verify, in plain words.' },
  dimensions: { description: 'What the figures are broken down by (period, domain).' },
  dkim: { description: 'The DKIM verdict on the message (PASS, FAIL, GRAY, PROCESSING_FAILED).', example: 'PASS' },
  dmarc: { description: 'The DMARC verdict on the message.', example: 'PASS' },
  spf: { description: 'The SPF verdict on the message.', example: 'PASS' },
  spam: { description: 'The spam verdict on the message.', example: 'PASS' },
  virus: { description: 'The virus verdict on the message.', example: 'PASS' },
  duration_ms: { description: 'How long it took, in milliseconds.', example: 34 },
  emails: { description: 'Email addresses, at most 100.', example: ['ada@example.com'] },
  ids: { description: 'Suppression ids, at most 100.', example: ['sup_YWRhQGV4YW1wbGUuY29t'] },
  end_date: { description: 'The end of the figures’ window (ISO 8601, UTC).', example: TIME },
  start_date: { description: 'The start of the figures’ window (ISO 8601, UTC).', example: '2026-03-01T00:00:00.000Z' },
  fallback_value: { description: 'The value used when a send gives none; without one the variable is required.' },
  first_name: { description: 'The contact’s first name.', example: 'Ada' },
  last_name: { description: 'The contact’s last name.', example: 'Lovelace' },
  format: { description: 'How deliveries are shaped: standard JSON, or a chat format (Slack, Discord).' },
  grace_period_seconds: { description: 'How long the previous secret still signs (beside the new one), in seconds.' },
  granularity: { description: 'The length of each period in data (daily or hourly).', example: 'daily' },
  lifted_at: { description: 'When an operator lifted the pause; null otherwise.', example: TIME },
  warned_at: { description: 'When the warning threshold was passed; null otherwise.', example: TIME },
  limit: { description: 'How many the plan allows in the period.', example: 200000 },
  used: { description: 'How many were used in the period so far.', example: 12 },
  resets_at: { description: 'When the count starts again from zero.', example: TIME },
  method: { description: 'The request’s HTTP method.', example: 'POST' },
  metrics: { description: 'The figures given, in order.' },
  minimum_sent: { description: 'Emails sent in the window before the rates are judged.', example: 200 },
  pause: { description: 'The rates past which sending is paused.' },
  warning: { description: 'The rates past which the account is warned.' },
  thresholds: { description: 'The warning and pause thresholds.' },
  plan: { description: 'The account’s plan.', example: 'free' },
  published_at: { description: 'When the current version was published; null for a draft never published.' },
  rate_limit: { description: 'The account’s API rate limit.' },
  requests_per_second: { description: 'Requests a second the API accepts from the account.', example: 10 },
  receiving: { description: 'enabled: the domain takes inbound mail (live mode only).', example: 'enabled' },
  sending: { description: 'enabled: live email may be sent from the domain.', example: 'enabled' },
  reply_to: { description: 'Where replies go: an address or a list of them.', example: ['support@acme.com'] },
  reputation: { description: 'The sending reputation: rates over the window, warnings and pauses.' },
  sent_at: { description: 'When the attempt was made (ISO 8601, UTC).', example: TIME },
  since: { description: 'The start of the window (ISO 8601, with a time zone).', example: TIME },
  until: { description: 'The end of the window (ISO 8601); now when left out.', example: TIME },
  skipped: { description: 'Deliveries the job did not attempt (already succeeded, or gone).', example: 0 },
  succeeded: { description: 'Deliveries the job attempted that succeeded.', example: 12 },
  failed: { description: 'Deliveries the job attempted that failed again.', example: 1 },
  source: { description: 'How the unsubscribe came (the one-click header, or the link).' },
  subType: { description: 'The provider’s bounce subtype.', example: 'General' },
  subscribed_at: { description: 'When the contact confirmed; null while pending.', example: TIME },
  success: { description: 'true: the endpoint answered 2xx.', example: true },
  tags: { description: 'Name and value pairs you attach, returned on the email and its events.' },
  value: { description: 'The value (of a tag, or of a DNS record to publish).', example: 'receipt' },
  valid: { description: 'true: the signature verifies with the webhook’s secret.', example: false },
  ipAddress: { description: 'The IP address the click came from.', example: '203.0.113.7' },
  userAgent: { description: 'The browser’s User-Agent at the click.', example: 'Mozilla/5.0' },
  'List-Unsubscribe': { description: 'One-Click: the RFC 8058 unsubscribe form post.', example: 'One-Click' },
  refused_by_account_suppression_list: { description: 'true: the address was on the account’s suppression list.' },
  unescaped: { description: 'true: the value goes into the HTML as is (not escaped).', example: false },
  status: { description: 'Its state now (the values listed).' },
  status_code: { description: 'The HTTP status the endpoint answered; null without an answer.', example: 200 },
  http_status_code: { description: 'The HTTP status the endpoint answered; 0 without an answer.', example: 200 },
  error: { description: 'Why it failed, in plain words; null when it did not.' },
  message: { description: 'What happened, in plain words.' },
  response: { description: 'The start of the endpoint’s answer (500 characters).' },
  headers: { description: 'Header names and values.' },
  html: { description: 'The HTML body.', example: '<p>Hi</p>' },
  text: { description: 'The plain-text body.', example: 'Hi' },
  subject: { description: 'The subject line.', example: 'Your receipt' },
  from: { description: 'The sender, an address or "Name <address>".', example: 'Acme <billing@acme.com>' },
  to: { description: 'The recipients: an address or a list.', example: ['ada@example.com'] },
  cc: { description: 'Copy recipients: an address or a list.', example: ['grace@example.com'] },
  bcc: { description: 'Blind copy recipients: an address or a list.', example: ['audit@acme.com'] },
  events: { description: 'Event types, or the events themselves, in time order.' },
  data: { description: 'This page’s items.' },
  has_more: { description: 'true: more items follow; ask again with after = next_after.', example: false },
  next_after: { description: 'The after of the next page; null on the last.', example: null },
  expires_at: { description: 'When it stops working (ISO 8601, UTC).', example: TIME },
  url: { description: 'The URL.', example: 'https://example.com/hooks' },
  email: { description: 'An email address.', example: 'ada@example.com' },
  path: { description: 'Where: a request’s path, or the field a problem is about.' },
  type: { description: 'What kind it is (the values listed).' },
  payload: { description: 'The event’s body, exactly as delivered.' },
  key: { description: 'A name (a variable’s key, or the secret API key shown once).', example: 'PRODUCT' },
  size: { description: 'The file’s size in bytes.', example: 48213 },
  content: { description: 'The file, base64.', example: 'JVBERi0xLjQKJSVFT0YK' },
  template: { description: 'A template to render: its id or alias, and its variables.' },
  variables: { description: 'Template variables: their keys, types and fallbacks, or the values of a send.' },
  reason: { description: 'Why, in a word (the values listed).' },
  origin: { description: 'Where it came from (Resend’s word).', example: 'bounce' },
  level: { description: 'How serious: warning or pause.', example: 'warning' },
  period: { description: 'The period the figures cover.', example: '2026-03-07' },
  permission: { description: 'Resend’s name for the key’s access: full_access or sending_access.' },
  scheduled_at: { description: 'When it is sent (ISO 8601, or words such as "in 1 hour").', example: 'in 1 hour' },
  suppressed: { description: 'The recipients not sent to because they are suppressed.', example: [] },
  window_days: { description: 'Days the rates are computed over.', example: 7 },
  deleted: { description: 'true: it was deleted (or revoked).', example: true },
  content_id: { description: 'The id an inline image is shown by (cid:… in the HTML); null for a plain attachment.' },
  received_for: { description: 'The addresses at your domains the message was received for.' },
  bounce_rate: { description: 'Bounced over sent in the window, 0 to 1.', example: 0.0435 },
  complaint_rate: { description: 'Complaints over sent in the window, 0 to 1.', example: 0.001 },
  signing_secret: { description: 'The secret deliveries are signed with (whsec_…), shown only here.' },
};

/** An example made from a schema, for a field the glossary gives none. */
function exampleOf(schema: JsonSchema, name: string): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(variants)) {
    const first = variants.find((v) => v.type !== 'null') ?? variants[0];
    return first ? exampleOf(first, name) : null;
  }
  if (typeof schema.$ref === 'string') return name.endsWith('s') ? [] : {};
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === 'boolean') return true;
  if (type === 'integer' || type === 'number') return typeof schema.minimum === 'number' ? schema.minimum : 1;
  if (type === 'array') return [];
  if (type === 'object') return {};
  if (type === 'null') return null;
  if (schema.format === 'date-time' || /_at$/.test(name)) return TIME;
  if (schema.format === 'email') return 'ada@example.com';
  if (schema.format === 'uri' || /url$/.test(name)) return 'https://example.com/hooks';
  const prefix = typeof schema.pattern === 'string' ? /^\^([a-z]+_)/.exec(schema.pattern)?.[1] : undefined;
  if (prefix) return `${prefix}01m9977vvmhjhan5z35c2vk2kh`;
  return name === 'id' ? 'id_01m9977vvmhjhan5z35c2vk2kh' : `${name.replace(/_/g, ' ')}`;
}

/** Every property schema in `schema`, with the name it is under and the schema it belongs to. */
function* properties(schema: unknown, parent: string): Generator<[string, string, JsonSchema]> {
  if (!schema || typeof schema !== 'object') return;
  const s = schema as JsonSchema;
  for (const [name, inner] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) {
    yield [parent, name, inner];
    yield* properties(inner, parent);
  }
  for (const key of ['items', 'additionalProperties', 'not']) yield* properties(s[key], parent);
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    if (Array.isArray(s[key])) for (const inner of s[key] as unknown[]) yield* properties(inner, parent);
  }
}

/** Each place fields live in the document: components, request bodies, answers, query parameters, webhooks. */
function* everyField(doc: JsonSchema): Generator<[string, string, JsonSchema]> {
  const components = (doc.components as { schemas: Record<string, JsonSchema> }).schemas;
  for (const [name, schema] of Object.entries(components)) yield* properties(schema, name);
  const operations = [
    ...Object.values((doc.paths ?? {}) as Record<string, Record<string, JsonSchema>>),
    ...Object.values((doc.webhooks ?? {}) as Record<string, Record<string, JsonSchema>>),
  ].flatMap((item) => Object.values(item));
  for (const op of operations) {
    const id = String(op.operationId ?? '');
    for (const parameter of (op.parameters ?? []) as JsonSchema[]) yield [id, String(parameter.name), parameter];
    const body = op.requestBody as { content?: Record<string, { schema?: unknown }> } | undefined;
    for (const media of Object.values(body?.content ?? {})) yield* properties(media.schema, id);
    for (const answer of Object.values((op.responses ?? {}) as Record<string, JsonSchema>)) {
      for (const media of Object.values((answer.content ?? {}) as Record<string, { schema?: unknown }>)) {
        yield* properties(media.schema, id);
      }
    }
  }
}

/** Fills the description and example of every field that has none (see the header); changes `doc` in place. */
export function documentFields(doc: JsonSchema): JsonSchema {
  const seen = new Map<string, Set<string>>();
  for (const [, name, schema] of everyField(doc)) {
    if (typeof schema.description === 'string') seen.set(name, (seen.get(name) ?? new Set()).add(schema.description));
  }
  for (const [parent, name, field] of everyField(doc)) {
    const isParameter = 'in' in field && 'schema' in field;
    const schema = isParameter ? (field.schema as JsonSchema) : field;
    const glossary = FIELDS[`${parent}.${name}`] ?? FIELDS[name];
    const elsewhere = seen.get(name);
    if (typeof field.description !== 'string') {
      const words =
        glossary?.description ?? (elsewhere?.size === 1 ? [...elsewhere][0] : undefined) ?? PARAMETERS[name];
      if (words) field.description = words;
    }
    const target = isParameter ? field : schema;
    if (target.example === undefined && schema.example === undefined) {
      target.example = glossary?.example !== undefined ? glossary.example : exampleOf(schema, name);
    }
  }
  return doc;
}

/** Path and query parameters without words of their own. */
const PARAMETERS: Readonly<Record<string, string>> = {
  id: 'The object’s id (in the path).',
  eventId: 'The webhook event’s id (evt_…).',
  deliveryId: 'The delivery’s id (dlv_…).',
  recoveryId: 'The recovery job’s id (rec_…).',
  attachmentId: 'The attachment’s id (att_…).',
  idOrEmail: 'The suppression’s id (sup_…) or its email address.',
  token: 'The signed token of the link (from the email or the answer that gave it).',
  limit: 'How many items a page holds (1 to 100, 20 when left out).',
  after: 'The next_after of the previous page: the items after it.',
  status: 'Only items with this status.',
  error_class: 'Only deliveries whose latest attempt failed this way (timeout, connection_refused, http_5xx, …).',
  origin: 'Only suppressions of this origin (bounce, complaint, manual).',
  to: 'Only emails with this recipient (to, cc or bcc; exact, any case).',
};
