// The official `resend` SDK (resend@6, unmodified) against the local runtime, as a Resend user switching to
// Sendflow would drive it: API keys, emails (send, get, list, update of a scheduled one, cancel), domains
// (create, get, list, update, verify, remove), contacts, usage, natural-language scheduledAt, and invalid requests
// whose errors the SDK hands back readable (the spec wins over Resend: apiKeys.create({ name }) alone is a 422);
// every namespace Sendflow does not offer answers an error naming the route.
import type { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resendClient } from '../support/resend';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let resend: Resend;
beforeAll(async () => {
  rt = await startTestRuntime();
  // The account's first key (made by the admin CLI); everything else goes through the SDK.
  const { key } = await rt.newKey();
  const { data, error } = await resendClient(rt, key).apiKeys.create({
    name: 'from the SDK',
    permission: 'full_access',
  });
  expect(error).toBeNull();
  expect(data?.token).toMatch(/^sf_test_/);
  resend = resendClient(rt, data?.token as string);
});
afterAll(() => rt.stop());

const to = 'success@simulator.amazonses.com';

describe('the resend SDK, unmodified', () => {
  it('apiKeys.create({ name, permission: full_access }) makes a key whose token sends; apiKeys.list shows it', async () => {
    const sent = await resend.emails.send({ from: 'Acme <hi@acme.example>', to, subject: 'Hello', text: 'Hi' });
    expect(sent.error).toBeNull();
    expect(sent.data?.id).toMatch(/^email_/);
    const keys = await resend.apiKeys.list();
    expect(keys.error).toBeNull();
    expect(keys.data?.data.map((k) => k.name)).toContain('from the SDK');
  });

  it('apiKeys.create({ name }) alone is refused: the spec wants a key made through the API to say what it may do', async () => {
    const { data, error } = await resend.apiKeys.create({ name: 'no scopes' });
    expect(data).toBeNull();
    expect(error).toMatchObject({ statusCode: 422, name: 'missing_required_field' });
    expect(error?.message).toMatch(/`scopes`.*`permission`/);
  });

  it('apiKeys.create with sending_access and domain_id: a key that sends from that domain only', async () => {
    const domain = await resend.domains.create({ name: 'restricted.example.com' });
    const created = await resend.apiKeys.create({
      name: 'one domain',
      permission: 'sending_access',
      domain_id: domain.data?.id as string,
    });
    expect(created.error).toBeNull();
    const restricted = resendClient(rt, created.data?.token as string);
    const ok = await restricted.emails.send({ from: 'a@restricted.example.com', to, subject: 'x', text: 'x' });
    expect(ok.error).toBeNull();
    const refused = await restricted.emails.send({ from: 'a@acme.example', to, subject: 'x', text: 'x' });
    expect(refused.error).toMatchObject({ statusCode: 403, name: 'restricted_api_key' });
    const reading = await restricted.domains.list();
    expect(reading.error).toMatchObject({ statusCode: 403, name: 'restricted_api_key' });
  });

  it('batch.send', async () => {
    const batch = await resend.batch.send([
      { from: 'hi@acme.example', to, subject: 'One', text: '1' },
      { from: 'hi@acme.example', to, subject: 'Two', text: '2' },
    ]);
    expect(batch.error).toBeNull();
    expect(batch.data?.data).toHaveLength(2);
  });

  it('emails.send, get and list', async () => {
    const sent = await resend.emails.send({
      from: 'Acme <hi@acme.example>',
      to: [to],
      subject: 'Invoice 42',
      html: '<p>Hello</p>',
      replyTo: 'billing@acme.example',
      tags: [{ name: 'category', value: 'invoice' }],
    });
    expect(sent.error).toBeNull();
    const id = sent.data?.id as string;
    await rt.settle();

    const got = await resend.emails.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({ object: 'email', id, subject: 'Invoice 42', html: '<p>Hello</p>', to: [to] });
    // Resend's last_event (what the SDK types and resend-mcp print as the status) is Sendflow's status.
    expect(got.data?.last_event).toBe((got.data as unknown as { status: string }).status);
    expect(got.data?.last_event).toMatch(/^(sent|delivered)$/);

    const listed = await resend.emails.list({ limit: 10 });
    expect(listed.error).toBeNull();
    expect(listed.data?.object).toBe('list');
    expect(listed.data?.data.map((e) => e.id)).toContain(id);
  });

  it('emails.update moves a scheduled email (get shows it), then emails.cancel cancels it', async () => {
    const first = new Date(Date.now() + 3_600_000).toISOString();
    const later = new Date(Date.now() + 7_200_000).toISOString();
    const sent = await resend.emails.send({
      from: 'hi@acme.example',
      to,
      subject: 'Later',
      text: 'x',
      scheduledAt: first,
    });
    expect(sent.error).toBeNull();
    const id = sent.data?.id as string;

    const updated = await resend.emails.update({ id, scheduledAt: later });
    expect(updated.error).toBeNull();
    expect(updated.data).toMatchObject({ object: 'email', id });
    expect((await resend.emails.get(id)).data).toMatchObject({ scheduled_at: later });

    const canceled = await resend.emails.cancel(id);
    expect(canceled.error).toBeNull();
    expect(canceled.data).toMatchObject({ object: 'email', id });
    expect((await resend.emails.get(id)).data).toMatchObject({ status: 'canceled' });

    const tooLate = await resend.emails.update({ id, scheduledAt: later });
    expect(tooLate.data).toBeNull();
    expect(tooLate.error).toMatchObject({ statusCode: 409, name: 'not_reschedulable' });
  });

  it('scheduledAt in natural language, on send, in a batch and on update', async () => {
    const before = Date.now();
    const sent = await resend.emails.send({
      from: 'hi@acme.example',
      to,
      subject: 'Soon',
      text: 'x',
      scheduledAt: 'in 1 hour',
    });
    expect(sent.error).toBeNull();
    const id = sent.data?.id as string;
    const at = Date.parse((await resend.emails.get(id)).data?.scheduled_at as string);
    expect(at).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
    expect(at).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);

    const batch = await resend.batch.send([
      { from: 'hi@acme.example', to, subject: 'B', text: 'x', scheduledAt: 'in 2 days' },
    ]);
    expect(batch.error).toBeNull();

    const moved = await resend.emails.update({ id, scheduledAt: 'tomorrow at 9am UTC' });
    expect(moved.error).toBeNull();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await resend.emails.get(id)).data?.scheduled_at).toBe(`${tomorrow}T09:00:00.000Z`);

    const unreadable = await resend.emails.send({
      from: 'hi@acme.example',
      to,
      subject: 'x',
      text: 'x',
      scheduledAt: 'soonish',
    });
    expect(unreadable.error).toMatchObject({ statusCode: 422, name: 'validation_error' });
    expect(unreadable.error?.message).toMatch(/^`scheduled_at` .*"in 1 min".*"tomorrow at 9am/);
  });

  it('domains.create, get, list, update, verify and remove', async () => {
    const created = await resend.domains.create({ name: 'sdk.example.com' });
    expect(created.error).toBeNull();
    const id = created.data?.id as string;
    expect(created.data).toMatchObject({ name: 'sdk.example.com', open_tracking: false, click_tracking: false });

    expect((await resend.domains.get(id)).data).toMatchObject({ id, name: 'sdk.example.com' });
    expect((await resend.domains.list()).data?.data.map((d) => d.id)).toContain(id);

    const updated = await resend.domains.update({ id, openTracking: true, clickTracking: true });
    expect(updated.error).toBeNull();
    expect((await resend.domains.get(id)).data).toMatchObject({ open_tracking: true, click_tracking: true });

    const verified = await resend.domains.verify(id);
    expect(verified.error).toBeNull();
    expect((await resend.domains.get(id)).data).toMatchObject({ status: 'verified' });

    const removed = await resend.domains.remove(id);
    expect(removed.error).toBeNull();
    expect(removed.data).toMatchObject({ id, deleted: true });
    expect((await resend.domains.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it('an invalid send: error.statusCode, error.name and error.message are set', async () => {
    const bad = await resend.emails.send({ from: 'not an address', to, subject: 'x', text: 'x' });
    expect(bad.data).toBeNull();
    expect(bad.error).toMatchObject({ statusCode: 422, name: 'invalid_from_address' });
    expect(bad.error?.message).toMatch(/^`from` is not an email address: "not an address" /);

    const missing = await resend.emails.send({ from: 'hi@acme.example', subject: 'x', text: 'x' } as never);
    expect(missing.error).toMatchObject({ statusCode: 422, name: 'missing_required_field' });
    expect(missing.error?.message).toBe('`to` is required: an email address or a list of email addresses.');

    const unauthorized = await resendClient(rt, `sf_test_${'x'.repeat(40)}`).emails.send({
      from: 'hi@acme.example',
      to,
      subject: 'x',
      text: 'x',
    });
    expect(unauthorized.error).toMatchObject({ statusCode: 401, name: 'invalid_api_key' });
    expect(unauthorized.error?.message).toBe('Invalid API key.');
  });

  it('empty cc, bcc and replyTo lists mean none (resend-mcp sends replyTo: [] when no reply-to is configured)', async () => {
    const sent = await resend.emails.send({ from: 'hi@acme.example', to, subject: 'x', text: 'x', replyTo: [] });
    expect(sent.error).toBeNull();
    const batch = await resend.batch.send([{ from: 'hi@acme.example', to, subject: 'x', text: 'x', cc: [], bcc: [] }]);
    expect(batch.error).toBeNull();
    const got = await resend.emails.get(sent.data?.id as string);
    expect(got.data).toMatchObject({ reply_to: [], cc: [], bcc: [] });
    // `to` still needs an address.
    const none = await resend.emails.send({ from: 'hi@acme.example', to: [], subject: 'x', text: 'x' });
    expect(none.error).toMatchObject({ statusCode: 422 });
  });

  it('contacts.get, update and remove by email address as well as by id', async () => {
    const created = await resend.contacts.create({ email: 'Grace@Example.com', firstName: 'Grace' });
    expect(created.error).toBeNull();
    const id = created.data?.id as string;
    const got = await resend.contacts.get({ email: 'grace@example.com' });
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({ id, email: 'grace@example.com', first_name: 'Grace' });
    expect((await resend.contacts.get({ email: 'GRACE@example.com' })).data).toMatchObject({ id });
    const updated = await resend.contacts.update({ email: 'grace@example.com', lastName: 'Hopper' });
    expect(updated.error).toBeNull();
    expect((await resend.contacts.get({ id })).data).toMatchObject({ last_name: 'Hopper' });
    const missing = await resend.contacts.get({ email: 'nobody@example.com' });
    expect(missing.error).toMatchObject({ statusCode: 404, message: 'No contact with address nobody@example.com.' });
    const removed = await resend.contacts.remove({ email: 'grace@example.com' });
    expect(removed.error).toBeNull();
    expect((await resend.contacts.get({ id })).error).toMatchObject({ statusCode: 404 });
  });
  it("contacts.list, and emails.create and batch.create (the SDK's other names for send)", async () => {
    const created = await resend.contacts.create({ email: 'lin@example.com', firstName: 'Lin' });
    expect(created.error).toBeNull();
    const listed = await resend.contacts.list();
    expect(listed.error).toBeNull();
    expect(listed.data?.data).toContainEqual(
      expect.objectContaining({ id: created.data?.id, email: 'lin@example.com', first_name: 'Lin' }),
    );
    const one = await resend.emails.create({ from: 'hi@acme.example', to, subject: 'Created', text: 'x' });
    expect(one.error).toBeNull();
    expect((await resend.emails.get(one.data?.id as string)).data).toMatchObject({ subject: 'Created' });
    const batch = await resend.batch.create([{ from: 'hi@acme.example', to, subject: 'Batch created', text: 'x' }]);
    expect(batch.error).toBeNull();
    expect(batch.data?.data).toHaveLength(1);
  });

  it("usage.get answers Sendflow's usage (plan, rate limit, quotas), not Resend's (a difference docs/resend.md names)", async () => {
    const usage = await resend.usage.get();
    expect(usage.error).toBeNull();
    expect(usage.data).toMatchObject({
      object: 'usage',
      plan: expect.any(String),
      rate_limit: { requests_per_second: expect.any(Number) },
      live_emails_this_month: { used: expect.any(Number), limit: expect.any(Number) },
      test_recipients_today: { used: expect.any(Number), limit: expect.any(Number) },
    });
    expect(usage.data).not.toHaveProperty('emails');
  });

  it('what Sendflow does not offer answers an error naming the route, through every such namespace', async () => {
    const calls = {
      'segments.list': () => resend.segments.list(),
      'audiences.list': () => resend.audiences.list(),
      'automations.list': () => resend.automations.list(),
      'broadcasts.list': () => resend.broadcasts.list(),
      'contactProperties.list': () => resend.contactProperties.list(),
      'contacts.imports.list': () => resend.contacts.imports.list(),
      'contacts.segments.list': () => resend.contacts.segments.list({ contactId: 'ct_x' }),
      'contacts.topics.list': () => resend.contacts.topics.list({ id: 'ct_x' }),
      'events.list': () => resend.events.list(),
      'inboxes.list': () => resend.inboxes.list(),
      'oauthGrants.list': () => resend.oauthGrants.list(),
      'topics.list': () => resend.topics.list(),
      'emails.share': () => resend.emails.share('email_x'),
      'domains.claims.create': () => resend.domains.claims.create({ name: 'claimed.example.com' }),
      'apiKeys.update': () => resend.apiKeys.update('key_x', { name: 'renamed' }),
    } as const;
    const answers: Record<string, string> = {};
    for (const [name, call] of Object.entries(calls)) {
      const { data, error } = await call();
      expect(data, name).toBeNull();
      answers[name] = `${error?.statusCode} ${error?.message}`;
    }
    // emails.metrics is served (issue 29: the reputation figures in Resend's shape).
    const metrics = await resend.emails.metrics();
    expect(metrics.error).toBeNull();
    expect(metrics.data).toMatchObject({ object: 'metrics', totals: expect.any(Object) });
    expect(answers).toEqual({
      'segments.list': '404 No route GET /v1/segments.',
      'audiences.list': '404 No route GET /v1/segments.',
      'automations.list': '404 No route GET /v1/automations.',
      'broadcasts.list': '404 No route GET /v1/broadcasts.',
      'contactProperties.list': '404 No route GET /v1/contact-properties.',
      'contacts.imports.list': '404 No route GET /v1/contacts/imports.',
      'contacts.segments.list': '404 No route GET /v1/contacts/ct_x/segments.',
      'contacts.topics.list': '404 No route GET /v1/contacts/ct_x/topics.',
      'events.list': '404 No route GET /v1/events.',
      'inboxes.list': '404 No route GET /v1/inboxes.',
      'oauthGrants.list': '404 No route GET /v1/oauth/grants.',
      'topics.list': '404 No route GET /v1/topics.',
      'emails.share': '404 No route POST /v1/emails/email_x/share.',
      'domains.claims.create': '405 Method POST is not allowed on /v1/domains/claim.',
      'apiKeys.update': '405 Method PATCH is not allowed on /v1/api-keys/key_x.',
    });
  });
});
