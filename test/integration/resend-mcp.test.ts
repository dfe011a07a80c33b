// Resend's own MCP server works against Sendflow: resend-mcp (the npm package, unmodified) started over stdio by
// the MCP client SDK with RESEND_API_KEY=sf_test_… and RESEND_BASE_URL at the local runtime, as an agent's MCP
// configuration starts it (docs/resend.md). Each row calls one tool as an agent would and checks the effect
// through Sendflow's own API; tools another branch is building are skipped with that branch's name, and tools
// for what Sendflow does not have must answer an error that says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ResendMcp, startResendMcp, type ToolAnswer } from '../support/resend-mcp';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let key: string;
let mcp: ResendMcp;

beforeAll(async () => {
  rt = await startTestRuntime();
  ({ key } = await rt.newKey());
  expect(key).toMatch(/^sf_test_/);
  mcp = await startResendMcp(rt, key);
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await rt?.stop();
});

type Json = Record<string, unknown>;

/** Sendflow's answer to GET `path` with the same key the MCP server uses. */
async function read(path: string): Promise<{ status: number; body: Json }> {
  const res = await rt.call(path, { key });
  return { status: res.status, body: (await res.json()) as Json };
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

type Row =
  | {
      readonly tool: string;
      readonly args: () => Json;
      /** What the tool's success changed, read back through Sendflow's API. */
      readonly check: (answer: ToolAnswer) => Promise<void>;
    }
  | { readonly tool: string; readonly skip: string };

const pending = {
  resendApi: 'pending: built on branch i30-resend-api',
  templates: 'pending: built on branch i30-templates',
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
  // Webhooks, templates, suppressions and logs: other branches make these Resend's shape
  { tool: 'create-webhook', skip: pending.resendApi },
  { tool: 'list-webhooks', skip: pending.resendApi },
  { tool: 'get-webhook', skip: pending.resendApi },
  { tool: 'update-webhook', skip: pending.resendApi },
  { tool: 'rotate-webhook-signing-secret', skip: pending.resendApi },
  { tool: 'list-webhook-events', skip: pending.resendApi },
  { tool: 'get-webhook-event', skip: pending.resendApi },
  { tool: 'list-webhook-event-attempts', skip: pending.resendApi },
  { tool: 'replay-webhook-event', skip: pending.resendApi },
  { tool: 'remove-webhook', skip: pending.resendApi },
  { tool: 'create-template', skip: pending.templates },
  { tool: 'publish-template', skip: pending.templates },
  { tool: 'list-templates', skip: pending.templates },
  { tool: 'get-template', skip: pending.templates },
  { tool: 'update-template', skip: pending.templates },
  { tool: 'duplicate-template', skip: pending.templates },
  { tool: 'remove-template', skip: pending.templates },
  { tool: 'add-suppression', skip: pending.resendApi },
  { tool: 'list-suppressions', skip: pending.resendApi },
  { tool: 'get-suppression', skip: pending.resendApi },
  { tool: 'remove-suppression', skip: pending.resendApi },
  { tool: 'batch-add-suppressions', skip: pending.resendApi },
  { tool: 'batch-remove-suppressions', skip: pending.resendApi },
  { tool: 'list-logs', skip: pending.resendApi },
  { tool: 'get-log', skip: pending.resendApi },
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
  // Resend's GET /contacts/imports and GET /emails/metrics look like /contacts/:id and /emails/:id to a router:
  // they answer as the routes they are, not as "no contact with id imports".
  { tool: 'list-contact-imports', args: {}, status: 404, message: /No route GET \/v1\/contacts\/imports/ },
  { tool: 'get-email-metrics', args: {}, status: 404, message: /No route GET \/v1\/emails\/metrics/ },
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
];

describe('resend-mcp (unmodified) against Sendflow', () => {
  it('starts over stdio and lists its tools', async () => {
    const { tools } = await mcp.client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const row of rows) expect(names, row.tool).toContain(row.tool);
    for (const row of notOffered) expect(names, row.tool).toContain(row.tool);
  });

  for (const row of rows) {
    if ('skip' in row) {
      it.skip(`${row.tool} (${row.skip})`, () => {});
      continue;
    }
    it(row.tool, async () => {
      const answer = await mcp.call(row.tool, row.args());
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
