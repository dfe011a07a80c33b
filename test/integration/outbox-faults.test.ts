// Fault injection between a state change and its publish, on the local runtime with a real receiver: the
// events queue refuses a publish (as a crash right after the write would leave it), or the outbox clear after a
// publish fails. The API still answers 2xx; the reconciler's sweep then relays what was left, and the receiver
// gets every domain.*, contact.* and email.unsubscribed event exactly once (one webhook-id each).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Outbox } from '../../lambdas/app/outbox';
import { reconcile } from '../../lambdas/app/webhooks/reconcile';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const TYPES = [
  'domain.created',
  'domain.updated',
  'domain.deleted',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.subscribed',
  'email.unsubscribed',
  // A one-click unsubscribe suppresses the address: its suppression.added rides the same outbox.
  'suppression.added',
];

async function account(path: string) {
  const { key } = await rt.newKey();
  const res = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}${path}`, events: TYPES }),
  });
  expect(res.status).toBe(201);
  return key;
}

const received = (path: string) =>
  receiver.received
    .filter((r) => r.path === path)
    .map((r) => ({ id: String(r.headers['webhook-id']), type: (JSON.parse(r.body) as { type: string }).type }));

/** Makes the next `count` publishes to the events queue fail; returns how many were refused so far. */
function failPublishes(count: number): () => number {
  const events = rt.services.events;
  const original = events.publish.bind(events);
  let left = count;
  let refused = 0;
  events.publish = async (batch, delay) => {
    if (left > 0 && batch.some((event) => TYPES.includes(event.type))) {
      left -= 1;
      refused += 1;
      throw new Error('events queue unavailable (injected)');
    }
    return original(batch, delay);
  };
  return () => refused;
}

/** Makes the next clear of each outbox fail (after its publish went through). */
function failClears(): void {
  for (const outbox of outboxes()) {
    const original = outbox.clear.bind(outbox);
    let left = 1;
    (outbox as { clear: Outbox['clear'] }).clear = async (pending) => {
      if (left-- > 0) throw new Error('outbox clear failed (injected)');
      return original(pending);
    };
  }
}

const outboxes = (): Outbox[] => [
  rt.services.domains.outbox,
  rt.services.contacts.outbox,
  rt.services.suppressions.outbox,
];
const waiting = async () => (await Promise.all(outboxes().map((o) => o.due(Number.MAX_SAFE_INTEGER, 100)))).flat();

/** One reconciler run with no grace (the test's stand-in for "a minute later"), then the pipeline settles. */
async function sweep() {
  await reconcile(rt.services, { graceMs: 0 });
  await rt.settle();
}

async function sentEmailUnsubscribeUrl(key: string): Promise<string> {
  const res = await rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'news@acme.test', to: 'reader@example.com', subject: 'Issue', text: 'x' }),
  });
  const { id } = (await res.json()) as { id: string };
  await rt.settle();
  const email = (await (await rt.call(`/emails/${id}`, { key })).json()) as {
    recipient_headers: Record<string, Record<string, string>>;
  };
  return (email.recipient_headers['reader@example.com']?.['List-Unsubscribe'] ?? '').slice(1, -1);
}

const unsubscribe = (url: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });

describe('a publish that fails after the state change', () => {
  it('answers 2xx, and the sweep delivers each event exactly once', async () => {
    // Arrange
    const key = await account('/publish');
    const url = await sentEmailUnsubscribeUrl(key);
    const refused = failPublishes(5);

    // Act: five changes whose publish fails.
    const domain = await rt.call('/domains', { method: 'POST', key, body: JSON.stringify({ name: 'a.example' }) });
    const { id: domainId } = (await domain.json()) as { id: string };
    const verified = await rt.call(`/domains/${domainId}/verify`, { method: 'POST', key });
    const contact = await rt.call('/contacts', { method: 'POST', key, body: JSON.stringify({ email: 'c@x.test' }) });
    const { id: contactId } = (await contact.json()) as { id: string };
    const deleted = await rt.call(`/contacts/${contactId}`, { method: 'DELETE', key });
    const unsubscribed = await unsubscribe(url);
    await rt.settle();
    const beforeSweep = received('/publish');
    await sweep();
    await sweep();

    // Assert
    expect([domain.status, verified.status, contact.status, deleted.status, unsubscribed.status]).toEqual([
      201, 200, 201, 200, 200,
    ]);
    expect(refused()).toBe(5);
    expect(beforeSweep).toEqual([]);
    const got = received('/publish');
    expect(got.map((r) => r.type).sort()).toEqual(
      [
        'contact.created',
        'contact.deleted',
        'domain.created',
        'domain.updated',
        'email.unsubscribed',
        'suppression.added',
      ].sort(),
    );
    expect(new Set(got.map((r) => r.id)).size).toBe(got.length);
    expect(await waiting()).toEqual([]);
  });
});

describe('an outbox clear that fails after the publish', () => {
  it('delivers each event once: the sweep relays it again with the same id, and the dispatcher does not resend', async () => {
    // Arrange
    const key = await account('/clear');
    const url = await sentEmailUnsubscribeUrl(key);
    failClears();

    // Act
    const contact = await rt.call('/contacts', { method: 'POST', key, body: JSON.stringify({ email: 'd@x.test' }) });
    const domain = await rt.call('/domains', { method: 'POST', key, body: JSON.stringify({ name: 'b.example' }) });
    const unsubscribed = await unsubscribe(url);
    await rt.settle();
    const first = received('/clear');
    const left = await waiting();
    await sweep();
    await sweep();

    // Assert
    expect([contact.status, domain.status, unsubscribed.status]).toEqual([201, 201, 200]);
    expect(first.map((r) => r.type).sort()).toEqual([
      'contact.created',
      'domain.created',
      'email.unsubscribed',
      'suppression.added',
    ]);
    expect(
      left
        .flatMap((p) => p.events)
        .map((e) => e.type)
        .sort(),
    ).toEqual(first.map((r) => r.type).sort());
    expect(received('/clear')).toEqual(first);
    expect(await waiting()).toEqual([]);
  });
});
