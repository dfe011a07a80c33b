// The official `resend` SDK (resend@6.38, unmodified) against the local runtime, for what a team switching from
// Resend meets after sending: webhooks (create, get, list, update, remove, rotateSigningSecret, events.list/get/
// replay, events.attempts.list, and webhooks.verify of a real delivery), suppressions (add, list, get, remove,
// batch add and remove, with suppression.added / suppression.removed delivered) and logs (list, get).
import type { Resend } from 'resend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver, stringHeaders } from '../support/receiver';
import { resendClient } from '../support/resend';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let resend: Resend;
let receiver: Receiver;

beforeAll(async () => {
  // suppression.* are behind their stored format (off by default: the release before reads no such event).
  rt = await startTestRuntime({ SF_ALLOW_PRIVATE_WEBHOOKS: 'true' });
  receiver = await startReceiver();
  resend = resendClient(rt, (await rt.newKey()).key);
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const to = 'success@simulator.amazonses.com';

/** Deliveries the receiver got for `path`, parsed, with their headers. */
function deliveriesTo(path: string) {
  return receiver.received
    .filter((r) => r.path === path)
    .map((r) => ({ body: r.body, headers: stringHeaders(r.headers), json: JSON.parse(r.body) }));
}

describe('resend.webhooks, unmodified', () => {
  it('create({ endpoint, events }) answers object webhook with its signing secret; get and list carry endpoint and status beside url and active', async () => {
    const endpoint = `${receiver.url}/create`;
    const created = await resend.webhooks.create({ endpoint, events: ['email.sent', 'email.delivered'] });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ object: 'webhook', id: expect.stringMatching(/^wh_/) });
    expect(created.data?.signing_secret).toMatch(/^whsec_/);
    const id = created.data?.id as string;

    const got = await resend.webhooks.get(id);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      object: 'webhook',
      id,
      endpoint,
      url: endpoint,
      status: 'enabled',
      active: true,
      events: ['email.sent', 'email.delivered'],
    });
    // Sendflow shows a signing secret only when it is made (create, rotation): never on a read.
    expect(got.data).not.toHaveProperty('signing_secret');

    const listed = await resend.webhooks.list();
    expect(listed.error).toBeNull();
    expect(listed.data).toMatchObject({ object: 'list', has_more: false });
    expect(listed.data?.data.find((w) => w.id === id)).toMatchObject({ endpoint, status: 'enabled' });
  });

  it('update sends PATCH with partial fields: status disabled pauses, enabled resumes, endpoint moves it', async () => {
    const created = await resend.webhooks.create({ endpoint: `${receiver.url}/update`, events: ['email.sent'] });
    const id = created.data?.id as string;

    const paused = await resend.webhooks.update(id, { status: 'disabled' });
    expect(paused.error).toBeNull();
    expect(paused.data).toMatchObject({ object: 'webhook', id, status: 'disabled', active: false });
    expect((await resend.webhooks.get(id)).data).toMatchObject({ status: 'disabled', events: ['email.sent'] });

    const moved = await resend.webhooks.update(id, {
      status: 'enabled',
      endpoint: `${receiver.url}/moved`,
      events: ['email.delivered'],
    });
    expect(moved.error).toBeNull();
    expect((await resend.webhooks.get(id)).data).toMatchObject({
      status: 'enabled',
      active: true,
      endpoint: `${receiver.url}/moved`,
      events: ['email.delivered'],
    });
  });

  it('a delivery to a webhook created through the SDK passes webhooks.verify with the secret create gave, and after rotateSigningSecret with the new one (the old one signs through its grace)', async () => {
    const path = '/verify';
    const created = await resend.webhooks.create({ endpoint: `${receiver.url}${path}`, events: ['email.sent'] });
    const id = created.data?.id as string;
    const secret = created.data?.signing_secret as string;

    await resend.emails.send({ from: 'hi@acme.example', to, subject: 'Verify me', text: 'x' });
    await rt.settle();
    const [first] = deliveriesTo(path);
    expect(first).toBeDefined();
    const verified = resend.webhooks.verify({
      payload: first?.body as string,
      headers: {
        id: first?.headers['webhook-id'] as string,
        timestamp: first?.headers['webhook-timestamp'] as string,
        signature: first?.headers['webhook-signature'] as string,
      },
      webhookSecret: secret,
    });
    // What verify hands back is the event in Resend's shape (with Sendflow's fields beside).
    expect(verified).toMatchObject({
      type: 'email.sent',
      created_at: expect.any(String),
      data: { email_id: expect.stringMatching(/^email_/), to: [to], from: 'hi@acme.example', subject: 'Verify me' },
    });
    // The spec's signature still holds too.
    expect(first?.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);

    const rotated = await resend.webhooks.rotateSigningSecret(id);
    expect(rotated.error).toBeNull();
    expect(rotated.data).toMatchObject({ object: 'webhook', id, signing_secret: expect.stringMatching(/^whsec_/) });
    const newSecret = rotated.data?.signing_secret as string;
    expect(newSecret).not.toBe(secret);

    await resend.emails.send({ from: 'hi@acme.example', to, subject: 'After rotation', text: 'x' });
    await rt.settle();
    const second = deliveriesTo(path).find((d) => d.json.data.subject === 'After rotation');
    const headers = {
      id: second?.headers['webhook-id'] as string,
      timestamp: second?.headers['webhook-timestamp'] as string,
      signature: second?.headers['webhook-signature'] as string,
    };
    for (const webhookSecret of [newSecret, secret]) {
      expect(resend.webhooks.verify({ payload: second?.body as string, headers, webhookSecret })).toMatchObject({
        type: 'email.sent',
      });
    }
  });

  it('events.list, events.get, events.attempts.list and events.replay read and retry the deliveries', async () => {
    const path = '/events';
    receiver.answer({ kind: 'status', status: 503 });
    const created = await resend.webhooks.create({ endpoint: `${receiver.url}${path}`, events: ['email.sent'] });
    const webhookId = created.data?.id as string;
    await resend.emails.send({ from: 'hi@acme.example', to, subject: 'Failing', text: 'x' });
    await rt.settle();
    receiver.answer({ kind: 'status', status: 200, body: 'thanks' });

    const listed = await resend.webhooks.events.list({ webhookId, limit: 10 });
    expect(listed.error).toBeNull();
    expect(listed.data).toMatchObject({ object: 'list', has_more: false });
    const [event] = listed.data?.data ?? [];
    expect(event).toMatchObject({ id: expect.stringMatching(/^dlv_/), type: 'email.sent', status: 'failed' });
    const eventId = event?.id as string;

    const got = await resend.webhooks.events.get({ webhookId, eventId });
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      object: 'webhook_event',
      id: eventId,
      type: 'email.sent',
      status: 'failed',
      next_attempt_at: null,
      payload: { type: 'email.sent', data: { subject: 'Failing' } },
    });

    const attempts = await resend.webhooks.events.attempts.list({ webhookId, eventId, limit: 2 });
    expect(attempts.error).toBeNull();
    expect(attempts.data?.has_more).toBe(true);
    expect(attempts.data?.data).toEqual([
      expect.objectContaining({ id: `${eventId}-5`, http_status_code: 503 }),
      expect.objectContaining({ id: `${eventId}-4`, http_status_code: 503 }),
    ]);
    const rest = await resend.webhooks.events.attempts.list({ webhookId, eventId, after: `${eventId}-4` });
    expect(rest.data?.data.map((a) => a.id)).toEqual([`${eventId}-3`, `${eventId}-2`, `${eventId}-1`]);
    expect(rest.data?.has_more).toBe(false);

    const replayed = await resend.webhooks.events.replay({ webhookId, eventId });
    expect(replayed.error).toBeNull();
    expect(replayed.data).toMatchObject({ object: 'webhook_event', id: eventId, status: 'success' });
    expect((await resend.webhooks.events.get({ webhookId, eventId })).data).toMatchObject({ status: 'success' });
    const [latest] = (await resend.webhooks.events.attempts.list({ webhookId, eventId })).data?.data ?? [];
    expect(latest).toMatchObject({ id: `${eventId}-6`, http_status_code: 200, response: 'thanks' });

    const unknown = await resend.webhooks.events.get({ webhookId, eventId: `dlv_${'0'.repeat(30)}` });
    expect(unknown.error).toMatchObject({ statusCode: 404, name: 'not_found' });
  });

  it('remove deletes it: object webhook, deleted true; then get is 404', async () => {
    const created = await resend.webhooks.create({ endpoint: `${receiver.url}/remove`, events: ['email.sent'] });
    const id = created.data?.id as string;
    const removed = await resend.webhooks.remove(id);
    expect(removed.error).toBeNull();
    expect(removed.data).toMatchObject({ object: 'webhook', id, deleted: true });
    expect((await resend.webhooks.get(id)).error).toMatchObject({ statusCode: 404 });
  });
});

describe('resend.suppressions, unmodified', () => {
  it('add, get (by id and by address), list (with origin), remove; suppression.added and .removed are delivered; a suppressed address is not sent to', async () => {
    const path = '/suppressions';
    const hook = await resend.webhooks.create({
      endpoint: `${receiver.url}${path}`,
      events: ['suppression.added', 'suppression.removed', 'email.suppressed'],
    });
    expect(hook.error).toBeNull();

    const added = await resend.suppressions.add({ email: 'Ada@Example.com' });
    expect(added.error).toBeNull();
    expect(added.data).toMatchObject({ object: 'suppression', id: expect.stringMatching(/^sup_/) });
    const id = added.data?.id as string;

    const byId = await resend.suppressions.get(id);
    expect(byId.error).toBeNull();
    expect(byId.data).toMatchObject({
      object: 'suppression',
      id,
      email: 'ada@example.com',
      origin: 'manual',
      source_id: null,
      created_at: expect.any(String),
    });
    expect((await resend.suppressions.get('ada@example.com')).data).toMatchObject({ id });

    // A bounce suppresses too (origin bounce, source_id the email).
    const bounced = await resend.emails.send({
      from: 'hi@acme.example',
      to: 'bounce@simulator.amazonses.com',
      subject: 'x',
      text: 'x',
    });
    await rt.settle();
    const list = await resend.suppressions.list({ origin: 'bounce' });
    expect(list.error).toBeNull();
    expect(list.data?.data).toEqual([
      expect.objectContaining({
        email: 'bounce@simulator.amazonses.com',
        origin: 'bounce',
        source_id: bounced.data?.id,
      }),
    ]);
    const all = await resend.suppressions.list({ limit: 1 });
    expect(all.data).toMatchObject({ object: 'list', has_more: true });
    expect(all.data?.data.map((s) => s.email)).toEqual(['ada@example.com']);

    // Sending to a suppressed address: email.suppressed, in Resend's shape too.
    await resend.emails.send({ from: 'hi@acme.example', to: 'ada@example.com', subject: 'x', text: 'x' });
    await rt.settle();

    const removed = await resend.suppressions.remove(id);
    expect(removed.error).toBeNull();
    expect(removed.data).toMatchObject({ object: 'suppression', id, deleted: true });
    expect((await resend.suppressions.get(id)).error).toMatchObject({ statusCode: 404, name: 'not_found' });
    expect((await resend.suppressions.remove(id)).error).toMatchObject({ statusCode: 404 });
    await rt.settle();

    const events = deliveriesTo(path).map((d) => d.json);
    const addedEvents = events.filter((e) => e.type === 'suppression.added');
    expect(addedEvents.map((e) => e.data.email).sort()).toEqual(['ada@example.com', 'bounce@simulator.amazonses.com']);
    expect(addedEvents.find((e) => e.data.email === 'ada@example.com')).toMatchObject({
      created_at: expect.any(String),
      data: { id, origin: 'manual', reason: 'manual', source_id: null },
    });
    expect(events.find((e) => e.type === 'suppression.removed')).toMatchObject({
      data: { id, email: 'ada@example.com', origin: 'manual' },
    });
    expect(events.find((e) => e.type === 'email.suppressed')).toMatchObject({
      data: { to: ['ada@example.com'], suppressed: { type: 'manual' } },
    });
  });

  it('batch.add and batch.remove (by emails and by ids), each in the order given', async () => {
    const added = await resend.suppressions.batch.add({ emails: ['b1@example.com', 'b2@example.com'] });
    expect(added.error).toBeNull();
    expect(added.data?.data).toEqual([
      expect.objectContaining({ object: 'suppression', email: 'b1@example.com' }),
      expect.objectContaining({ object: 'suppression', email: 'b2@example.com' }),
    ]);
    const [first, second] = added.data?.data ?? [];

    const byEmail = await resend.suppressions.batch.remove({ emails: ['b1@example.com', 'never@example.com'] });
    expect(byEmail.error).toBeNull();
    expect(byEmail.data?.data).toEqual([
      expect.objectContaining({ id: first?.id, deleted: true }),
      expect.objectContaining({ email: 'never@example.com', deleted: false }),
    ]);
    const byId = await resend.suppressions.batch.remove({ ids: [second?.id as string] });
    expect(byId.data?.data).toEqual([expect.objectContaining({ id: second?.id, deleted: true })]);
    expect((await resend.suppressions.get('b2@example.com')).error).toMatchObject({ statusCode: 404 });

    const bad = await resend.suppressions.add({ email: 'not an address' });
    expect(bad.error).toMatchObject({ statusCode: 422 });
  });

  it("another account's suppressions are not seen", async () => {
    await resend.suppressions.add({ email: 'private@example.com' });
    const other = resendClient(rt, (await rt.newKey()).key);
    expect((await other.suppressions.get('private@example.com')).error).toMatchObject({ statusCode: 404 });
    expect((await other.suppressions.list()).data?.data).toEqual([]);
  });
});

describe('resend.logs, unmodified', () => {
  it('list names each request with Resend fields; get reads one, with its bodies as kept', async () => {
    await resend.domains.list();
    const listed = await resend.logs.list({ limit: 5 });
    expect(listed.error).toBeNull();
    expect(listed.data).toMatchObject({ object: 'list', has_more: true });
    const entry = listed.data?.data.find((e) => e.endpoint === '/domains');
    expect(entry).toMatchObject({
      method: 'GET',
      response_status: 200,
      user_agent: expect.stringMatching(/^resend-node:/),
      created_at: expect.any(String),
    });

    const got = await resend.logs.get(entry?.id as string);
    expect(got.error).toBeNull();
    expect(got.data).toMatchObject({
      object: 'log',
      id: entry?.id,
      endpoint: '/domains',
      method: 'GET',
      response_status: 200,
      request_body: null,
      response_body: expect.objectContaining({ object: 'list' }),
    });
    expect((await resend.logs.get(`req_${'0'.repeat(26)}`)).error).toMatchObject({ statusCode: 404 });
  });
});
