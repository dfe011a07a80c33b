// Resend's OpenAPI document is the contract for the paths Sendflow shares with Resend. Every operation of the
// committed copy (test/fixtures/resend-openapi, with its source and date) has one row below: either a driver that
// makes Sendflow answer it over real HTTP on the local runtime, checked against Resend's response schema for that
// operation (status, content type, body: ajv, draft 2020-12), or a skip that says why Sendflow does not serve it
// ("not served: …"; a path added to the manifest fails the table's check until its row drives it).
//
// Resend's schemas mark almost nothing `required`, so each driven row also lists the fields its schema names that
// Sendflow's answer lacks, each with the reason (`absent`); the list must be exact, so a field Sendflow starts
// answering, or stops answering, fails here until the row says so.
//
// Where the document and Resend's own SDK (resend@6.38, what users run) disagree, the SDK's types win, and each
// such place is named in `sdkSays` below: the document's OpenAPI 3.0 `nullable: true` (meaningless in 3.1) is read
// as its authors meant it, and the fields the SDK types `… | null` may be null. Two relaxations more, about
// what Resend's document cannot know: fields the schema does not name are allowed (Sendflow answers more than
// Resend: `additionalProperties: false` is ignored), and ids are Sendflow's own (`email_…`, `dom_…`, not UUIDs), so
// `format: uuid` checks an id-shaped string. Everything else is Resend's schema.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { routes } from '../../lambdas/manifest';
import { answerOf, type OpenApiChecker, openApiChecker } from '../support/openapi-check';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { RawSmtp } from '../support/smtp-client';

type Json = Record<string, unknown>;
type Body = Json & { id: string; data: Json[] };

const resendDocument = parse(
  readFileSync(new URL('../fixtures/resend-openapi/resend.yaml', import.meta.url), 'utf8'),
) as Json;

/** Fields of the document's schemas that Resend's SDK types `… | null` (pointers below #/components/schemas). */
const sdkSays: Record<string, string> = {
  'Email/properties/html': 'GetEmailResponseSuccess.html: string | null',
  'Email/properties/text': 'GetEmailResponseSuccess.text: string | null',
  'GetContactResponseSuccess/properties/first_name': 'Contact.first_name: string | null',
  'GetContactResponseSuccess/properties/last_name': 'Contact.last_name: string | null',
  'ListContactsResponseSuccess/properties/data/items/properties/first_name': 'Contact.first_name: string | null',
  'ListContactsResponseSuccess/properties/data/items/properties/last_name': 'Contact.last_name: string | null',
  'GetReceivedEmailResponse/properties/attachments/items/properties/content_id':
    'InboundAttachment.content_id: string | null',
  'ListReceivedEmailsResponse/properties/data/items/properties/attachments/items/properties/content_id':
    'InboundAttachment.content_id: string | null',
  'Template/properties/alias': 'Template.alias: string | null',
  'Template/properties/from': 'Template.from: string | null',
  'Template/properties/subject': 'Template.subject: string | null',
  'Template/properties/text': 'Template.text: string | null',
  'TemplateVariable/properties/fallback_value': 'TemplateVariable.fallback_value: string | number | null',
  'TemplateListItem/properties/alias': "TemplateListItem: Pick<Template, 'alias' | …>",
};

/** `type: T` becomes `type: [T, "null"]`; a `oneOf` without a type gains `{ type: "null" }`. */
function allowNull(schema: Json): void {
  if (schema.type === undefined && Array.isArray(schema.oneOf)) {
    if (!schema.oneOf.some((option: Json) => option.type === 'null'))
      schema.oneOf = [...schema.oneOf, { type: 'null' }];
    return;
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (!types.includes('null')) schema.type = [...types, 'null'];
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
}

/** The document as its authors and Resend's SDK mean it: `nullable: true` honoured, then `sdkSays` applied. */
function asMeant(document: Json): Json {
  const doc = structuredClone(document);
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) for (const item of node) visit(item);
    else if (node && typeof node === 'object') {
      const object = node as Json;
      if (object.nullable === true && object.type !== undefined) allowNull(object);
      for (const value of Object.values(object)) visit(value);
    }
  };
  visit(doc);
  for (const pointer of Object.keys(sdkSays)) {
    let target: unknown = (doc.components as Json).schemas;
    for (const part of pointer.split('/')) target = (target as Json | undefined)?.[part];
    if (!target) throw new Error(`sdkSays: no schema at ${pointer}`);
    allowNull(target as Json);
  }
  return doc;
}

/** What a driver gets: the runtime, keys, and the parsed bodies of rows already run. */
interface Ctx {
  readonly rt: TestRuntime;
  /** A test-mode key with every scope. */
  readonly key: string;
  /** A live-mode key with every scope (receiving needs a live domain). */
  readonly live: string;
  /** The body a row already run answered (for the ids it made). */
  body(operationId: string): Body;
  /** Scratch ids drivers share. */
  readonly ids: Record<string, string>;
  call(method: string, path: string, json?: unknown, key?: string): Promise<Response>;
}

type Row =
  | {
      readonly op: string;
      readonly drive: (c: Ctx) => Promise<Response>;
      /** Fields Resend's schema names that Sendflow's answer lacks (JSON pointers, `*` any index), and why. */
      readonly absent?: Readonly<Record<string, string>>;
    }
  | { readonly op: string; readonly skip: string };

const notServed = (why: string) => `not served: ${why}`;

/** Why a field is absent, where more than one row says it. */
const why = {
  messageId: 'each recipient gets a copy of its own, with its own Message-ID: the email has none of its own',
  notInList: "not in a list (Resend's SDK: ListEmail omits html and text); GET /v1/emails/:id has them",
  region: 'Sendflow sends from the AWS region it is deployed in: a domain has no region of its own',
  trackingSubdomain: 'custom tracking subdomains are refused (docs/resend.md, Domains)',
  unsubscribed:
    'a contact is pending or subscribed (status, double opt-in); an unsubscribe puts the address on the ' +
    'suppression list, not on the contact',
  contentId: "inline parts only (Resend's SDK: content_id?), and this one is an attachment",
  priority: "MX records only (Resend's SDK: priority?), and these are DKIM CNAMEs",
};

const email = { from: 'Acme <hi@acme.example>', to: ['reader@example.com'], subject: 'Hi', text: 'Hi' };
const hookUrl = 'https://hooks.acme.example/sendflow';
/** No alias, from, subject or text: each is null, as Resend's SDK types it (`sdkSays`). */
const template = {
  name: 'Order confirmation',
  html: '<p>Hi {{{NAME}}}, your {{{PRODUCT}}}.</p>',
  variables: [
    { key: 'NAME', type: 'string', fallback_value: 'there' },
    { key: 'PRODUCT', type: 'string' },
  ],
};
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

/** Sends a message over SMTP to a receiving live domain; the received email's id. */
async function receiveOne(c: Ctx): Promise<string> {
  if (c.ids.received) return c.ids.received;
  const domain = (await (
    await c.call('POST', '/domains', { name: 'in.example.com', capabilities: { receiving: 'enabled' } }, c.live)
  ).json()) as Body;
  expect((await c.call('POST', `/domains/${domain.id}/verify`, undefined, c.live)).status).toBe(200);
  const { client } = await RawSmtp.open(c.rt.smtpPort);
  const sent = await client.send(
    'a@sender.example',
    ['b@in.example.com'],
    [
      'Subject: conformance',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'hello',
      '--b',
      'Content-Type: application/pdf; name="a.pdf"',
      'Content-Disposition: attachment; filename="a.pdf"',
      '',
      'pdf',
      '--b--',
      '',
    ].join('\r\n'),
  );
  client.close();
  expect(sent.data.code).toBe(250);
  await c.rt.inbound.idle();
  const list = (await (await c.call('GET', '/emails/receiving', undefined, c.live)).json()) as Body;
  c.ids.received = String(list.data[0]?.id);
  return c.ids.received;
}

/**
 * Every operation of Resend's document, in the order they run. One line per operation: a path another branch
 * adds becomes one driver here.
 */
const table: Row[] = [
  // Emails
  { op: 'emails/send', drive: (c) => c.call('POST', '/emails', email) },
  {
    op: 'emails/send-batch',
    drive: (c) => c.call('POST', '/emails/batch', [email, { ...email, to: ['other@example.com'] }]),
  },
  {
    op: 'emails/get',
    drive: async (c) => {
      await c.rt.settle();
      return c.call('GET', `/emails/${c.body('emails/send').id}`);
    },
    absent: { '/message_id': why.messageId },
  },
  {
    op: 'emails/list',
    drive: (c) => c.call('GET', '/emails?limit=5'),
    absent: { '/data/*/html': why.notInList, '/data/*/text': why.notInList, '/data/*/message_id': why.messageId },
  },
  {
    op: 'emails/update',
    drive: async (c) => {
      const later = (await (await c.call('POST', '/emails', { ...email, scheduled_at: inAnHour() })).json()) as Body;
      c.ids.scheduled = later.id;
      return c.call('PATCH', `/emails/${later.id}`, { scheduled_at: new Date(Date.now() + 7_200_000).toISOString() });
    },
  },
  {
    op: 'emails/cancel',
    drive: (c) => c.call('POST', `/emails/${c.ids.scheduled}/cancel`),
    absent: { '/message_id': why.messageId },
  },
  {
    op: 'emails/list-attachments',
    drive: async (c) => {
      const files = [{ filename: 'a.txt', content: 'QQ==' }];
      const sent = (await (await c.call('POST', '/emails', { ...email, attachments: files })).json()) as Body;
      c.ids.attached = sent.id;
      return c.call('GET', `/emails/${sent.id}/attachments`);
    },
    absent: { '/data/*/content_id': why.contentId },
  },
  {
    op: 'emails/get-attachment',
    drive: (c) =>
      c.call('GET', `/emails/${c.ids.attached}/attachments/${c.body('emails/list-attachments').data[0]?.id}`),
    absent: { '/content_id': why.contentId },
  },
  { op: 'emails/share', skip: notServed('no shareable links to an email (a Resend dashboard page)') },
  // With a dimension: `data` is omitted when none is asked, as Resend's document says. By period only: a test-mode
  // email's sending domain need not be a Sendflow domain, so a `domain` row's `domain_id` may be null.
  {
    op: 'emails/metrics',
    drive: (c) => c.call('GET', '/emails/metrics?dimensions=period'),
    absent: {
      '/data/*/domain_id': 'present only with the `domain` dimension (Resend: the same), not asked here',
      '/data/*/domain_name': 'present only with the `domain` dimension (Resend: the same), not asked here',
      '/data/*/email_id': 'no `email` dimension: rates are judged per account and sending domain',
      '/data/*/broadcast_id': 'no broadcasts (Sendflow sends transactional email)',
      '/data/*/broadcast_name': 'no broadcasts (Sendflow sends transactional email)',
    },
  },
  // Receiving
  {
    op: 'emails/list-receiving',
    drive: async (c) => {
      await receiveOne(c);
      return c.call('GET', '/emails/receiving?limit=5', undefined, c.live);
    },
  },
  {
    op: 'emails/get-receiving',
    drive: async (c) => c.call('GET', `/emails/receiving/${await receiveOne(c)}`, undefined, c.live),
  },
  {
    op: 'emails/list-receiving-attachments',
    drive: async (c) => c.call('GET', `/emails/receiving/${await receiveOne(c)}/attachments`, undefined, c.live),
    absent: { '/data/*/content_id': why.contentId },
  },
  {
    op: 'emails/get-receiving-attachment',
    drive: async (c) => {
      const id = await receiveOne(c);
      const files = c.body('emails/list-receiving-attachments');
      return c.call('GET', `/emails/receiving/${id}/attachments/${files.data[0]?.id}`, undefined, c.live);
    },
    absent: { '/content_id': why.contentId },
  },
  // Domains
  {
    op: 'domains/create',
    drive: (c) => c.call('POST', '/domains', { name: 'mail.example.com' }),
    absent: {
      '/region': why.region,
      '/tracking_subdomain': why.trackingSubdomain,
      '/records/*/priority': why.priority,
    },
  },
  { op: 'domains/list', drive: (c) => c.call('GET', '/domains'), absent: { '/data/*/region': why.region } },
  {
    op: 'domains/get',
    drive: (c) => c.call('GET', `/domains/${c.body('domains/create').id}`),
    absent: {
      '/region': why.region,
      '/tracking_subdomain': why.trackingSubdomain,
      '/records/*/priority': why.priority,
    },
  },
  {
    op: 'domains/update',
    drive: (c) => c.call('PATCH', `/domains/${c.body('domains/create').id}`, { open_tracking: true }),
  },
  { op: 'domains/verify', drive: (c) => c.call('POST', `/domains/${c.body('domains/create').id}/verify`) },
  { op: 'domains/remove', drive: (c) => c.call('DELETE', `/domains/${c.body('domains/create').id}`) },
  { op: 'domains/create-claim', skip: notServed('no domain claims (moving a domain between Resend accounts)') },
  { op: 'domains/get-claim', skip: notServed('no domain claims (moving a domain between Resend accounts)') },
  { op: 'domains/verify-claim', skip: notServed('no domain claims (moving a domain between Resend accounts)') },
  // API keys
  {
    op: 'api-keys/create',
    drive: (c) => c.call('POST', '/api-keys', { name: 'conformance', permission: 'sending_access' }),
  },
  {
    op: 'api-keys/list',
    drive: (c) => c.call('GET', '/api-keys'),
    absent: { '/data/*/last_used_at': 'Sendflow does not record when a key was last used (GET /v1/logs: 24 h)' },
  },
  { op: 'api-keys/remove', drive: (c) => c.call('DELETE', `/api-keys/${c.body('api-keys/create').id}`) },
  { op: 'api-keys/update', skip: notServed('a key is not renamed: revoke it and create another') },
  { op: 'oauth/list-grants', skip: notServed('no OAuth applications') },
  { op: 'oauth/revoke-grant', skip: notServed('no OAuth applications') },
  // Contacts (Sendflow's contacts are the account's, with double opt-in; no audiences or segments)
  {
    op: 'contacts/create',
    drive: (c) => c.call('POST', '/contacts', { email: 'new@example.com', first_name: 'Ada' }),
  },
  {
    op: 'contacts/list',
    drive: (c) => c.call('GET', '/contacts'),
    absent: { '/data/*/unsubscribed': why.unsubscribed },
  },
  {
    op: 'contacts/get',
    drive: (c) => c.call('GET', `/contacts/${c.body('contacts/create').id}`),
    absent: { '/properties': 'no custom contact properties', '/unsubscribed': why.unsubscribed },
  },
  {
    op: 'contacts/update',
    drive: (c) => c.call('PATCH', `/contacts/${c.body('contacts/create').id}`, { last_name: 'Lovelace' }),
  },
  { op: 'contacts/remove', drive: (c) => c.call('DELETE', `/contacts/${c.body('contacts/create').id}`) },
  { op: 'contacts/create-import', skip: notServed('no contact imports (CSV)') },
  { op: 'contacts/list-imports', skip: notServed('no contact imports (CSV)') },
  { op: 'contacts/get-import', skip: notServed('no contact imports (CSV)') },
  { op: 'contacts/list-segments', skip: notServed('no segments') },
  { op: 'contacts/add-segment', skip: notServed('no segments') },
  { op: 'contacts/remove-segment', skip: notServed('no segments') },
  { op: 'contacts/list-topics', skip: notServed('no topics') },
  { op: 'contacts/update-topics', skip: notServed('no topics') },
  { op: 'audiences/create', skip: notServed('no audiences (Resend deprecates them for segments)') },
  { op: 'audiences/list', skip: notServed('no audiences (Resend deprecates them for segments)') },
  { op: 'audiences/get', skip: notServed('no audiences (Resend deprecates them for segments)') },
  { op: 'audiences/remove', skip: notServed('no audiences (Resend deprecates them for segments)') },
  { op: 'segments/create', skip: notServed('no segments') },
  { op: 'segments/list', skip: notServed('no segments') },
  { op: 'segments/get', skip: notServed('no segments') },
  { op: 'segments/remove', skip: notServed('no segments') },
  { op: 'topics/create', skip: notServed('no topics') },
  { op: 'topics/list', skip: notServed('no topics') },
  { op: 'topics/get', skip: notServed('no topics') },
  { op: 'topics/update', skip: notServed('no topics') },
  { op: 'topics/remove', skip: notServed('no topics') },
  { op: 'contact-properties/create', skip: notServed('no custom contact properties') },
  { op: 'contact-properties/list', skip: notServed('no custom contact properties') },
  { op: 'contact-properties/get', skip: notServed('no custom contact properties') },
  { op: 'contact-properties/update', skip: notServed('no custom contact properties') },
  { op: 'contact-properties/remove', skip: notServed('no custom contact properties') },
  // Webhooks
  {
    op: 'webhooks/create',
    drive: (c) => c.call('POST', '/webhooks', { endpoint: hookUrl, events: ['email.sent', 'email.delivered'] }),
  },
  { op: 'webhooks/list', drive: (c) => c.call('GET', '/webhooks') },
  {
    op: 'webhooks/get',
    drive: (c) => c.call('GET', `/webhooks/${c.body('webhooks/create').id}`),
    absent: {
      '/signing_secret':
        'the spec shows the secret only when it is made (create, rotation); it is never read back ' +
        '(docs/resend.md, Webhooks)',
    },
  },
  {
    op: 'webhooks/update',
    drive: (c) => c.call('PATCH', `/webhooks/${c.body('webhooks/create').id}`, { status: 'disabled' }),
  },
  { op: 'webhooks/remove', drive: (c) => c.call('DELETE', `/webhooks/${c.body('webhooks/create').id}`) },
  // Templates
  { op: 'templates/create', drive: (c) => c.call('POST', '/templates', template) },
  { op: 'templates/list', drive: (c) => c.call('GET', '/templates') },
  {
    op: 'templates/get',
    drive: (c) => c.call('GET', `/templates/${c.body('templates/create').id}`),
    absent: { '/variables/*/id': "a variable is named by its key (Resend's SDK: TemplateVariable has no id)" },
  },
  {
    op: 'templates/update',
    drive: (c) => c.call('PATCH', `/templates/${c.body('templates/create').id}`, { subject: 'Your {{{PRODUCT}}}!' }),
  },
  { op: 'templates/publish', drive: (c) => c.call('POST', `/templates/${c.body('templates/create').id}/publish`) },
  {
    op: 'templates/duplicate',
    drive: (c) => c.call('POST', `/templates/${c.body('templates/create').id}/duplicate`),
  },
  { op: 'templates/remove', drive: (c) => c.call('DELETE', `/templates/${c.body('templates/duplicate').id}`) },
  // Suppressions and logs
  { op: 'suppressions/add', drive: (c) => c.call('POST', '/suppressions', { email: 'bounced@example.com' }) },
  { op: 'suppressions/list', drive: (c) => c.call('GET', '/suppressions') },
  { op: 'suppressions/get', drive: (c) => c.call('GET', `/suppressions/${c.body('suppressions/add').id}`) },
  {
    op: 'suppressions/batch-add',
    drive: (c) => c.call('POST', '/suppressions/batch/add', { emails: ['b1@example.com', 'b2@example.com'] }),
  },
  {
    op: 'suppressions/batch-remove',
    drive: (c) => c.call('POST', '/suppressions/batch/remove', { emails: ['b1@example.com', 'b2@example.com'] }),
  },
  { op: 'suppressions/remove', drive: (c) => c.call('DELETE', `/suppressions/${c.body('suppressions/add').id}`) },
  { op: 'logs/list', drive: (c) => c.call('GET', '/logs') },
  { op: 'logs/get', drive: (c) => c.call('GET', `/logs/${c.body('logs/list').data[0]?.id}`) },
  // Broadcasts, automations, events: marketing features Sendflow does not have
  ...['create', 'list', 'get', 'update', 'remove', 'send', 'cancel', 'recipients', 'list-clicked-links'].map(
    (name) => ({ op: `broadcasts/${name}`, skip: notServed('no broadcasts (Sendflow sends transactional email)') }),
  ),
  ...['create', 'list', 'get', 'update', 'remove', 'duplicate', 'stop', 'list-runs', 'get-run'].map((name) => ({
    op: `automations/${name}`,
    skip: notServed('no automations'),
  })),
  ...['create', 'list', 'get', 'update', 'remove', 'send'].map((name) => ({
    op: `events/${name}`,
    skip: notServed('no custom events (Sendflow\u2019s events are its webhooks\u2019)'),
  })),
];

/** Resend's operations: operationId -> method and path. */
const operations = new Map<string, { method: string; path: string }>();
for (const [path, item] of Object.entries(resendDocument.paths as Record<string, Json>)) {
  for (const [method, op] of Object.entries(item)) {
    const id = (op as Json).operationId;
    if (typeof id === 'string') operations.set(id, { method: method.toUpperCase(), path });
  }
}
/** `/emails/{email_id}` and Sendflow's `/emails/{id}` are the same path. */
const shape = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
const served = new Set(routes.filter((route) => !('dashboard' in route)).map((r) => shape(r.method, r.path)));
const isServed = (op: string) => {
  const found = operations.get(op);
  return found !== undefined && served.has(shape(found.method, found.path));
};

let rt: TestRuntime;
let checker: OpenApiChecker;
const bodies = new Map<string, Body>();
let ctx: Ctx;

beforeAll(async () => {
  rt = await startTestRuntime();
  const { key } = await rt.newKey();
  const { key: live } = await rt.newKey({ mode: 'live' });
  checker = openApiChecker(asMeant(resendDocument), {
    allowExtraFields: true,
    // Sendflow's ids: a prefix, an underscore, then letters and digits (not UUIDs).
    formats: { uuid: /^[a-z]+_[A-Za-z0-9]+$/ },
  });
  ctx = {
    rt,
    key,
    live,
    ids: {},
    body(op) {
      const found = bodies.get(op);
      if (!found) throw new Error(`${op} has not run (or failed): run it before what depends on it`);
      return found;
    },
    call(method, path, json, given) {
      return rt.call(path, {
        method,
        key: given ?? key,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    },
  };
});
afterAll(() => rt.stop());

describe("Sendflow answers as Resend's OpenAPI document says, on every path both serve", () => {
  for (const row of table) {
    const found = operations.get(row.op);
    const title = `${row.op}: ${found?.method} ${found?.path}`;
    if ('skip' in row) {
      it.skip(`${title} (${row.skip})`, () => {});
      continue;
    }
    it(title, async () => {
      const answer = await answerOf(await row.drive(ctx));
      expect(answer.status, `${row.op}: ${answer.body.slice(0, 500)}`).toBeLessThan(300);
      if (/json/.test(answer.headers.get('content-type') ?? '')) bodies.set(row.op, JSON.parse(answer.body) as Body);
      expect(checker.check(row.op, answer), answer.body.slice(0, 2000)).toEqual([]);
      expect(checker.absentFields(row.op, answer), `${row.op}: fields Resend's schema names`).toEqual(
        Object.keys(row.absent ?? {}).sort(),
      );
    });
  }
});

describe('the table', () => {
  it("names every operation of Resend's document once, and nothing else", () => {
    const named = table.map((row) => row.op);
    expect(named.length).toBe(new Set(named).size);
    expect([...named].sort()).toEqual([...operations.keys()].sort());
  });

  it('drives every operation Sendflow serves; a skip is one Sendflow does not serve', () => {
    const drivenButNotServed = table.filter((row) => 'drive' in row && !isServed(row.op)).map((row) => row.op);
    expect(drivenButNotServed).toEqual([]);
    // A path added to the manifest fails here until its row drives it.
    const servedButSkipped = table.filter((row) => 'skip' in row && isServed(row.op)).map((row) => row.op);
    expect(servedButSkipped).toEqual([]);
    for (const row of table) {
      if ('skip' in row) expect(row.skip, row.op).toMatch(/^not served: .+$/);
    }
  });
});
