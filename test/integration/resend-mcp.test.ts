// Resend's own MCP server works against Sendflow: resend-mcp (the npm package, unmodified) started over stdio by
// the MCP client SDK with RESEND_API_KEY=sf_test_… and RESEND_BASE_URL at the local runtime, as an agent's MCP
// configuration starts it (docs/resend.md). Each row calls one tool as an agent would and checks the effect
// through Sendflow's own API (webhook deliveries at a receiver on loopback); tools for what Sendflow does not have
// must answer an error that says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Received, type Receiver, startReceiver, verifyStandardWebhook } from '../support/receiver';
import { type ResendMcp, startResendMcp, type ToolAnswer } from '../support/resend-mcp';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let key: string;
let mcp: ResendMcp;
let receiver: Receiver;

beforeAll(async () => {
  // The webhook tools' endpoint is a receiver on loopback.
  rt = await startTestRuntime({ SF_ALLOW_PRIVATE_WEBHOOKS: 'true' });
  receiver = await startReceiver();
  ({ key } = await rt.newKey());
  expect(key).toMatch(/^sf_test_/);
  mcp = await startResendMcp(rt, key);
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await receiver?.close();
  await rt?.stop();
});

type Json = Record<string, unknown>;

/** Sendflow's answer to GET `path` with the same key the MCP server uses. */
async function read(path: string): Promise<{ status: number; body: Json }> {
  const res = await rt.call(path, { key });
  return { status: res.status, body: (await res.json()) as Json };
}

/** Sends an email through Sendflow's API with the MCP server's key (an arrangement, not a tool). */
async function send(email: Json): Promise<{ id: string }> {
  const res = await rt.call('/emails', { method: 'POST', key, body: JSON.stringify(email) });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string };
}

/** The first `prefix_…` id in a tool's text. */
function idIn(answer: ToolAnswer, prefix: string): string {
  const found = answer.text.match(new RegExp(`\\b${prefix}_[0-9a-z]+\\b`));
  if (!found) throw new Error(`no ${prefix}_ id in: ${answer.text}`);
  return found[0];
}

const ids: Record<string, string> = {};
const from = 'Acme <agent@acme.example>';
const to = 'success@simulator.amazonses.com';

type Row = {
  readonly tool: string;
  /** The tool's arguments; anything the tool needs to find is arranged here first. */
  readonly args: () => Json | Promise<Json>;
  /** What the tool's success changed, read back through Sendflow's API. */
  readonly check: (answer: ToolAnswer) => Promise<void>;
};

/** The tools an agent uses to send and manage mail, in the order they run. One line per tool. */
const rows: Row[] = [
  // Emails
  {
    tool: 'send-email',
    args: () => ({ from, to: [to], subject: 'From an agent', text: 'Hello from resend-mcp', html: '<p>Hello</p>' }),
    async check(answer) {
      expect(answer.text).toMatch(/^Email sent successfully!/);
      ids.email = idIn(answer, 'email');
      await rt.settle();
      const { status, body } = await read(`/emails/${ids.email}`);
      expect(status).toBe(200);
      expect(body).toMatchObject({ from, to: [to], subject: 'From an agent', html: '<p>Hello</p>', reply_to: [] });
      expect(body.status).toMatch(/^(sent|delivered)$/);
    },
  },
  {
    tool: 'send-batch-emails',
    args: () => ({
      emails: [
        { from, to: ['one@example.com'], subject: 'Batch one', text: '1' },
        { from, to: ['two@example.com'], subject: 'Batch two', text: '2' },
      ],
    }),
    async check(answer) {
      const batch = answer.text.match(/\bemail_[0-9a-z]+\b/g) ?? [];
      expect(batch).toHaveLength(2);
      for (const [i, id] of batch.entries()) {
        expect((await read(`/emails/${id}`)).body).toMatchObject({ subject: `Batch ${['one', 'two'][i]}` });
      }
    },
  },
  {
    tool: 'list-emails',
    args: () => ({ limit: 10 }),
    async check(answer) {
      // resend-mcp prints last_event as the status: Sendflow's status under Resend's name.
      expect(answer.text).toMatch(
        new RegExp(`Subject: "From an agent" \\| Status: (sent|delivered) .*ID: ${ids.email}`),
      );
    },
  },
  {
    tool: 'get-email',
    args: () => ({ id: ids.email }),
    async check(answer) {
      expect(answer.text).toContain(`- ID: ${ids.email}`);
      expect(answer.text).toMatch(/- Status: (sent|delivered)/);
      expect(answer.text).toContain('Hello from resend-mcp');
    },
  },
  {
    tool: 'send-email',
    args: () => ({
      from,
      to: [to],
      subject: 'Later',
      text: 'x',
      scheduledAt: new Date(Date.now() + 3_600_000).toISOString(),
    }),
    async check(answer) {
      ids.scheduled = idIn(answer, 'email');
      expect((await read(`/emails/${ids.scheduled}`)).body).toMatchObject({ status: 'scheduled' });
    },
  },
  {
    tool: 'update-email',
    args: () => {
      ids.later = new Date(Date.now() + 7_200_000).toISOString();
      return { id: ids.scheduled, scheduledAt: ids.later };
    },
    async check() {
      expect((await read(`/emails/${ids.scheduled}`)).body).toMatchObject({ scheduled_at: ids.later });
    },
  },
  {
    tool: 'cancel-email',
    args: () => ({ id: ids.scheduled }),
    async check() {
      expect((await read(`/emails/${ids.scheduled}`)).body).toMatchObject({ status: 'canceled' });
    },
  },
  {
    tool: 'list-received-emails',
    args: () => ({}),
    async check(answer) {
      expect(answer.text).toBe('No received emails found.');
    },
  },
  // Domains
  {
    tool: 'create-domain',
    args: () => ({ name: 'agent.example.com' }),
    async check(answer) {
      ids.domain = idIn(answer, 'dom');
      expect(answer.text).toMatch(/DKIM \(CNAME\):\n {2}Name: [0-9a-f]+\._domainkey\.agent\.example\.com/);
      expect((await read(`/domains/${ids.domain}`)).body).toMatchObject({ name: 'agent.example.com' });
    },
  },
  {
    tool: 'list-domains',
    args: () => ({}),
    async check(answer) {
      expect(answer.text).toContain(`Name: agent.example.com\nID: ${ids.domain}`);
    },
  },
  {
    tool: 'get-domain',
    args: () => ({ id: ids.domain }),
    async check(answer) {
      expect(answer.text).toContain('agent.example.com');
    },
  },
  {
    tool: 'update-domain',
    args: () => ({ id: ids.domain, openTracking: true }),
    async check() {
      expect((await read(`/domains/${ids.domain}`)).body).toMatchObject({ open_tracking: true });
    },
  },
  {
    tool: 'verify-domain',
    args: () => ({ id: ids.domain }),
    async check() {
      expect((await read(`/domains/${ids.domain}`)).body).toMatchObject({ status: 'verified' });
    },
  },
  {
    tool: 'remove-domain',
    args: () => ({ id: ids.domain }),
    async check() {
      expect((await read(`/domains/${ids.domain}`)).status).toBe(404);
    },
  },
  // Contacts (by id or by email address, as resend-mcp offers both)
  {
    tool: 'create-contact',
    args: () => ({ email: 'ada@example.com', firstName: 'Ada' }),
    async check(answer) {
      ids.contact = idIn(answer, 'ct');
      expect((await read(`/contacts/${ids.contact}`)).body).toMatchObject({ email: 'ada@example.com' });
    },
  },
  {
    tool: 'list-contacts',
    args: () => ({}),
    async check(answer) {
      expect(answer.text).toContain(`ID: ${ids.contact}\nEmail: ada@example.com\nFirst name: Ada`);
    },
  },
  {
    tool: 'get-contact',
    args: () => ({ email: 'ada@example.com' }),
    async check(answer) {
      expect(answer.text).toContain(ids.contact as string);
    },
  },
  {
    tool: 'update-contact',
    args: () => ({ email: 'ada@example.com', lastName: 'Lovelace' }),
    async check() {
      expect((await read(`/contacts/${ids.contact}`)).body).toMatchObject({ last_name: 'Lovelace' });
    },
  },
  {
    tool: 'remove-contact',
    args: () => ({ id: ids.contact }),
    async check() {
      expect((await read(`/contacts/${ids.contact}`)).status).toBe(404);
    },
  },
  // API keys
  {
    tool: 'create-api-key',
    args: () => ({ name: 'made by an agent', permission: 'sending_access' }),
    async check(answer) {
      ids.apiKey = idIn(answer, 'key');
      const token = answer.text.match(/Token: (sf_test_\S+)/)?.[1] ?? '';
      const sent = await rt.call('/emails', {
        method: 'POST',
        key: token,
        body: JSON.stringify({ from, to, subject: 'x', text: 'x' }),
      });
      expect(sent.status).toBe(200);
    },
  },
  {
    tool: 'list-api-keys',
    args: () => ({}),
    async check(answer) {
      expect(answer.text).toContain(`Name: made by an agent\nID: ${ids.apiKey}`);
    },
  },
  {
    tool: 'remove-api-key',
    args: () => ({ id: ids.apiKey }),
    async check() {
      const keys = (await read('/api-keys')).body.data as { id: string }[];
      expect(keys.map((k) => k.id)).not.toContain(ids.apiKey);
    },
  },
  // Webhooks: a receiver on loopback gets the deliveries
  {
    tool: 'create-webhook',
    args: () => ({ endpoint: `${receiver.url}/agent`, events: ['email.sent'] }),
    async check(answer) {
      ids.webhook = idIn(answer, 'wh');
      ids.secret = answer.text.match(/Signing Secret: (whsec_\S+)/)?.[1] ?? '';
      expect(ids.secret).not.toBe('');
      expect((await read(`/webhooks/${ids.webhook}`)).body).toMatchObject({
        object: 'webhook',
        endpoint: `${receiver.url}/agent`,
        events: ['email.sent'],
        status: 'enabled',
      });
    },
  },
  {
    tool: 'list-webhooks',
    args: () => ({}),
    async check(answer) {
      expect(answer.text).toContain(
        `Endpoint: ${receiver.url}/agent\nStatus: enabled\nEvents: email.sent\nID: ${ids.webhook}`,
      );
    },
  },
  {
    tool: 'get-webhook',
    args: () => ({ webhookId: ids.webhook }),
    async check(answer) {
      expect(answer.text).toContain(`Endpoint: ${receiver.url}/agent\nStatus: enabled\nEvents: email.sent`);
      // Sendflow shows a signing secret only when it is made (create, rotation): resend-mcp prints what it got.
      expect(answer.text).toContain('Signing Secret: undefined');
      expect(answer.text).not.toContain(ids.secret as string);
    },
  },
  {
    tool: 'update-webhook',
    args: () => ({ webhookId: ids.webhook, events: ['email.sent', 'email.bounced'], status: 'disabled' }),
    async check() {
      expect((await read(`/webhooks/${ids.webhook}`)).body).toMatchObject({
        events: ['email.sent', 'email.bounced'],
        status: 'disabled',
        active: false,
      });
    },
  },
  {
    tool: 'update-webhook',
    args: () => ({ webhookId: ids.webhook, status: 'enabled' }),
    async check() {
      expect((await read(`/webhooks/${ids.webhook}`)).body).toMatchObject({ status: 'enabled', active: true });
    },
  },
  {
    tool: 'rotate-webhook-signing-secret',
    args: () => ({ webhookId: ids.webhook }),
    async check(answer) {
      ids.rotated = answer.text.match(/Signing Secret: (whsec_\S+)/)?.[1] ?? '';
      expect(ids.rotated).toMatch(/^whsec_/);
      expect(ids.rotated).not.toBe(ids.secret);
    },
  },
  {
    tool: 'list-webhook-events',
    async args() {
      // A delivery to list: an email sent now, signed with the rotated secret (and the old one, in its grace).
      await send({ from, to, subject: 'For the webhook', text: 'x' });
      await rt.settle();
      return { webhookId: ids.webhook };
    },
    async check(answer) {
      const delivered = receiver.received.filter((r) => r.path === '/agent');
      expect(delivered.map((r) => JSON.parse(r.body).type)).toEqual(['email.sent']);
      expect(verifyStandardWebhook(ids.rotated as string, delivered[0] as Received)).toBe(true);
      ids.event = idIn(answer, 'dlv');
      expect(answer.text).toContain(`Type: email.sent\nStatus: success\nID: ${ids.event}`);
      const events = (await read(`/webhooks/${ids.webhook}/events`)).body.data as Json[];
      expect(events.map((e) => e.id)).toEqual([ids.event]);
    },
  },
  {
    tool: 'get-webhook-event',
    args: () => ({ webhookId: ids.webhook, eventId: ids.event }),
    async check(answer) {
      expect(answer.text).toContain(`Type: email.sent\nStatus: success\nID: ${ids.event}`);
      expect(answer.text).toContain('Next attempt at: none scheduled');
      expect(answer.text).toContain('"subject": "For the webhook"');
    },
  },
  {
    tool: 'list-webhook-event-attempts',
    args: () => ({ webhookId: ids.webhook, eventId: ids.event }),
    async check(answer) {
      expect(answer.text).toContain('Found 1 delivery attempt:\nHTTP status: 200');
      expect(answer.text).toContain(`ID: ${ids.event}-1\nResponse: ok`);
    },
  },
  {
    tool: 'replay-webhook-event',
    args: () => ({ webhookId: ids.webhook, eventId: ids.event }),
    async check(answer) {
      expect(answer.text).toContain(`ID: ${ids.event}`);
      // The manual retry: one more delivery of the same event, now, and a second attempt on record.
      const delivered = receiver.received.filter((r) => r.path === '/agent');
      expect(delivered).toHaveLength(2);
      expect(delivered[1]?.body).toBe(delivered[0]?.body);
      const attempts = (await read(`/webhooks/${ids.webhook}/events/${ids.event}/attempts`)).body.data as Json[];
      expect(attempts.map((a) => a.id)).toEqual([`${ids.event}-2`, `${ids.event}-1`]);
    },
  },
  {
    tool: 'remove-webhook',
    args: () => ({ webhookId: ids.webhook }),
    async check() {
      expect((await read(`/webhooks/${ids.webhook}`)).status).toBe(404);
    },
  },
  // Templates (by id or alias, as resend-mcp offers both)
  {
    tool: 'create-template',
    args: () => ({
      name: 'Welcome',
      alias: 'welcome',
      subject: 'Welcome, {{{NAME}}}',
      html: '<p>Hi {{{NAME}}}</p>',
      variables: [{ key: 'NAME', type: 'string', fallbackValue: 'there' }],
    }),
    async check(answer) {
      expect(answer.text).toMatch(/^Template created successfully \(draft\)\./);
      ids.template = idIn(answer, 'tpl');
      expect((await read(`/templates/${ids.template}`)).body).toMatchObject({
        alias: 'welcome',
        status: 'draft',
        variables: [{ key: 'NAME', type: 'string', fallback_value: 'there' }],
      });
    },
  },
  {
    tool: 'publish-template',
    args: () => ({ id: 'welcome' }),
    async check() {
      expect((await read(`/templates/${ids.template}`)).body).toMatchObject({ status: 'published' });
      // Published: a send by the template renders it (the fallback fills NAME).
      const sent = await send({ from, to, template: { id: 'welcome' } });
      expect((await read(`/emails/${sent.id}`)).body).toMatchObject({
        subject: 'Welcome, there',
        html: '<p>Hi there</p>',
        template_id: ids.template,
      });
    },
  },
  {
    tool: 'list-templates',
    args: () => ({}),
    async check(answer) {
      expect(answer.text).toContain(`Name: Welcome\nStatus: published\nAlias: welcome\nID: ${ids.template}`);
    },
  },
  {
    tool: 'get-template',
    args: () => ({ id: 'welcome' }),
    async check(answer) {
      expect(answer.text).toContain(`Name: Welcome\nID: ${ids.template}\nStatus: published\nAlias: welcome`);
      expect(answer.text).toContain('Subject: Welcome, {{{NAME}}}\nFrom: none');
      expect(answer.text).toContain('Variables:\n  {{{NAME}}} (string) — fallback: there');
      expect(answer.text).toContain('HTML:\n<p>Hi {{{NAME}}}</p>');
    },
  },
  {
    tool: 'update-template',
    args: () => ({ id: ids.template, subject: 'Welcome aboard, {{{NAME}}}' }),
    async check() {
      expect((await read(`/templates/${ids.template}`)).body).toMatchObject({
        subject: 'Welcome aboard, {{{NAME}}}',
        has_unpublished_versions: true,
      });
    },
  },
  {
    tool: 'duplicate-template',
    args: () => ({ id: 'welcome' }),
    async check(answer) {
      ids.copy = idIn(answer, 'tpl');
      expect(ids.copy).not.toBe(ids.template);
      expect((await read(`/templates/${ids.copy}`)).body).toMatchObject({
        subject: 'Welcome aboard, {{{NAME}}}',
        status: 'draft',
      });
    },
  },
  {
    tool: 'remove-template',
    args: () => ({ id: ids.copy }),
    async check() {
      expect((await read(`/templates/${ids.copy}`)).status).toBe(404);
      expect((await read(`/templates/${ids.template}`)).status).toBe(200);
    },
  },
  // Suppressions (by id or address)
  {
    tool: 'add-suppression',
    args: () => ({ email: 'gone@example.com' }),
    async check(answer) {
      ids.suppression = answer.text.match(/ID: (sup_[\w-]+)/)?.[1] ?? '';
      expect((await read('/suppressions/gone@example.com')).body).toMatchObject({
        id: ids.suppression,
        origin: 'manual',
      });
      // Suppressed: a send to it is accepted and not delivered (email.suppressed, no attempt).
      const sent = await send({ from, to: ['gone@example.com'], subject: 'x', text: 'x' });
      await rt.settle();
      expect((await read(`/emails/${sent.id}`)).body).toMatchObject({ status: 'suppressed' });
    },
  },
  {
    tool: 'list-suppressions',
    args: () => ({ origin: 'manual' }),
    async check(answer) {
      expect(answer.text).toContain(`Email: gone@example.com\nID: ${ids.suppression}\nOrigin: manual`);
    },
  },
  {
    tool: 'get-suppression',
    args: () => ({ idOrEmail: ids.suppression }),
    async check(answer) {
      expect(answer.text).toMatch(/^Email: gone@example\.com\n/);
    },
  },
  {
    tool: 'remove-suppression',
    args: () => ({ idOrEmail: 'gone@example.com' }),
    async check() {
      expect((await read(`/suppressions/${ids.suppression}`)).status).toBe(404);
    },
  },
  {
    tool: 'batch-add-suppressions',
    args: () => ({ emails: ['b1@example.com', 'b2@example.com'] }),
    async check(answer) {
      expect(answer.text).toMatch(/^Added 2 suppressions successfully\./);
      for (const email of ['b1@example.com', 'b2@example.com']) {
        expect((await read(`/suppressions/${email}`)).status).toBe(200);
      }
    },
  },
  {
    tool: 'batch-remove-suppressions',
    args: () => ({ emails: ['b1@example.com', 'b2@example.com'] }),
    async check(answer) {
      expect(answer.text).toMatch(/^Removed 2 suppressions successfully\./);
      expect((await read('/suppressions')).body.data).toEqual([]);
    },
  },
  // Sending metrics (issue 29's reputation figures, in Resend's shape)
  {
    tool: 'get-email-metrics',
    args: () => ({}),
    async check(answer) {
      expect(answer.text).not.toMatch(/error|No route/i);
      expect((await read('/emails/metrics')).status).toBe(200);
    },
  },
  // Logs: the API request log
  {
    tool: 'list-logs',
    args: () => ({ limit: 3 }),
    async check(answer) {
      const listed = answer.text.match(/\breq_[0-9a-z]+\b/g) ?? [];
      expect(listed).toHaveLength(3);
      ids.log = listed[0] as string;
      const logs = (await read('/logs?limit=4')).body.data as Json[];
      // Newest first; the read above is the newest now.
      expect(logs.slice(1).map((l) => l.id)).toEqual(listed);
    },
  },
  {
    tool: 'get-log',
    args: () => ({ logId: ids.log }),
    async check(answer) {
      const { body } = await read(`/logs/${ids.log}`);
      expect(answer.text).toContain(
        `ID: ${ids.log}\nEndpoint: ${body.method} ${body.endpoint}\nStatus: ${body.response_status}`,
      );
      // Sendflow keeps no request or response bodies.
      expect(answer.text).toContain('Request Body:\nnull');
    },
  },
];

/**
 * Tools for what Sendflow does not have, and the error each must answer: Sendflow's status, and a message that
 * names what is not there (matched, not word for word), which resend-mcp passes on to the agent.
 */
const notOffered: { tool: string; args: Json; status: number; message: RegExp }[] = [
  { tool: 'list-broadcasts', args: {}, status: 404, message: /No route GET \/v1\/broadcasts/ },
  { tool: 'list-segments', args: {}, status: 404, message: /No route GET \/v1\/segments/ },
  { tool: 'list-topics', args: {}, status: 404, message: /No route GET \/v1\/topics/ },
  { tool: 'list-contact-properties', args: {}, status: 404, message: /No route GET \/v1\/contact-properties/ },
  { tool: 'get-automation', args: {}, status: 404, message: /No route GET \/v1\/automations/ },
  { tool: 'list-oauth-grants', args: {}, status: 404, message: /No route GET \/v1\/oauth\/grants/ },
  {
    tool: 'create-domain-claim',
    args: { name: 'claimed.example.com' },
    status: 405,
    message: /Method POST is not allowed on \/v1\/domains\/claim/,
  },
  { tool: 'manage-events', args: { action: 'list' }, status: 404, message: /No route GET \/v1\/events/ },
  {
    tool: 'send-event',
    args: { event: 'user.created', email: 'a@example.com' },
    status: 404,
    message: /No route POST \/v1\/events\/send/,
  },
  // Resend's GET /contacts/imports looks like /contacts/:id to a router: it answers as the route it is, not as
  // "no contact with id imports".
  { tool: 'list-contact-imports', args: {}, status: 404, message: /No route GET \/v1\/contacts\/imports/ },
  {
    tool: 'share-email',
    args: { id: 'email_x' },
    status: 404,
    message: /No route POST \/v1\/emails\/email_x\/share/,
  },
  {
    tool: 'update-api-key',
    args: { id: 'key_x', name: 'renamed' },
    status: 405,
    message: /Method PATCH is not allowed on \/v1\/api-keys\/key_x/,
  },
  // Suppressions and logs page forward only (`after`), as webhook events do; templates take `before` too.
  {
    tool: 'list-suppressions',
    args: { before: 'sup_x' },
    status: 422,
    message: /Unknown query parameter `before`\. Known parameters here: `limit`, `after`, `origin`\./,
  },
  {
    tool: 'list-logs',
    args: { before: 'req_x' },
    status: 422,
    message:
      /Unknown query parameter `before`\. Known parameters here: `limit`, `after`, `status`, `method`, `route`, `api_key_id`, `since`, `until`\./,
  },
];

describe('resend-mcp (unmodified) against Sendflow', () => {
  it('starts over stdio and lists its tools', async () => {
    const { tools } = await mcp.client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const row of rows) expect(names, row.tool).toContain(row.tool);
    for (const row of notOffered) expect(names, row.tool).toContain(row.tool);
  });

  for (const row of rows) {
    it(row.tool, async () => {
      const answer = await mcp.call(row.tool, await row.args());
      expect(answer.isError, `${row.tool}: ${answer.text}\n${mcp.stderr()}`).toBe(false);
      await row.check(answer);
    });
  }

  it.each(notOffered)('$tool: what Sendflow does not have is an error that says so', async (row) => {
    const answer = await mcp.call(row.tool, row.args);
    expect(answer.isError, answer.text).toBe(true);
    const sendflow = JSON.parse(answer.text.slice(answer.text.indexOf('{'))) as Json;
    expect(sendflow.statusCode).toBe(row.status);
    expect(sendflow.message).toMatch(row.message);
  });
});
