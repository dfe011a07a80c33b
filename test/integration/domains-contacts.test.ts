// Domains (domain.created / updated / deleted) and contacts (contact.created / updated / deleted /
// subscribed with double opt-in) over real HTTP, with their events at a real receiver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  rt = await startTestRuntime({ SF_DOMAIN_VERIFY_SECONDS: '0.4' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const settle = async () => {
  await rt.settle();
};
const events = (path: string) =>
  receiver.received
    .filter((r) => r.path === path)
    .map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });

async function account(path: string, mode: 'live' | 'test' = 'test') {
  const { key } = await rt.newKey({ mode });
  await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({
      url: `${receiver.url}${path}`,
      events: [
        'domain.created',
        'domain.updated',
        'domain.deleted',
        'contact.created',
        'contact.updated',
        'contact.deleted',
        'contact.subscribed',
      ],
    }),
  });
  return key;
}

describe('domains', () => {
  it('tracks neither opens nor clicks unless asked, on create or with PATCH (domain.updated when it changes)', async () => {
    const key = await account('/d-tracking');
    const plain = (await (
      await rt.call('/domains', { method: 'POST', key, body: JSON.stringify({ name: 'plain.example.com' }) })
    ).json()) as Record<string, unknown>;
    const opens = await rt.call('/domains', {
      method: 'POST',
      key,
      body: JSON.stringify({ name: 'opens.example.com', open_tracking: true }),
    });

    expect(plain).toMatchObject({ open_tracking: false, click_tracking: false });
    expect(opens.status).toBe(201);
    expect(await opens.json()).toMatchObject({ open_tracking: true, click_tracking: false });

    const patched = await rt.call(`/domains/${plain.id}`, {
      method: 'PATCH',
      key,
      body: JSON.stringify({ click_tracking: true }),
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id: plain.id, open_tracking: false, click_tracking: true });
    const read = (await (await rt.call(`/domains/${plain.id}`, { key })).json()) as Record<string, unknown>;
    expect(read).toMatchObject({ open_tracking: false, click_tracking: true });
    await settle();
    expect(events('/d-tracking').filter((e) => e.type === 'domain.updated' && e.data.id === plain.id)).toHaveLength(1);

    const empty = await rt.call(`/domains/${plain.id}`, { method: 'PATCH', key, body: JSON.stringify({}) });
    const other = await rt.call(`/domains/${plain.id}`, {
      method: 'PATCH',
      key,
      body: JSON.stringify({ name: 'x.example.com' }),
    });
    const missing = await rt.call('/domains/dom_missing', {
      method: 'PATCH',
      key,
      body: JSON.stringify({ open_tracking: true }),
    });
    expect([empty.status, other.status, missing.status]).toEqual([422, 422, 404]);
  });

  it('adds a domain with its DKIM records, verifies after the delay (domain.updated once), deletes it', async () => {
    const key = await account('/d1');
    const res = await rt.call('/domains', { method: 'POST', key, body: JSON.stringify({ name: 'Mail.Example.com' }) });
    expect(res.status).toBe(201);
    const domain = (await res.json()) as {
      id: string;
      name: string;
      status: string;
      records: { type: string; name: string; value: string }[];
    };
    expect(domain).toMatchObject({ name: 'mail.example.com', status: 'pending' });
    expect(domain.records).toHaveLength(3);
    for (const record of domain.records) {
      expect(record.type).toBe('CNAME');
      expect(record.name).toMatch(/^[0-9a-f]{32}\._domainkey\.mail\.example\.com$/);
      expect(record.value).toMatch(/^[0-9a-f]{32}\.dkim\.amazonses\.com$/);
    }
    expect(
      (await rt.call('/domains', { method: 'POST', key, body: JSON.stringify({ name: 'mail.example.com' }) })).status,
    ).toBe(409);

    expect(
      (await (await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key })).json()) as object,
    ).toMatchObject({ status: 'pending' });
    await new Promise((r) => setTimeout(r, 450));
    expect(
      (await (await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key })).json()) as object,
    ).toMatchObject({ status: 'verified' });
    await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key });
    const list = (await (await rt.call('/domains', { key })).json()) as { data: { id: string; status: string }[] };
    expect(list.data).toEqual([expect.objectContaining({ id: domain.id, status: 'verified' })]);

    expect((await rt.call(`/domains/${domain.id}`, { method: 'DELETE', key })).status).toBe(200);
    expect((await rt.call(`/domains/${domain.id}`, { key })).status).toBe(404);
    await settle();
    expect(events('/d1').map((e) => `${e.type} ${e.data.status}`)).toEqual([
      'domain.created pending',
      'domain.updated verified',
      'domain.deleted verified',
    ]);
  });

  it('validates names, scopes the routes, and keeps tenants apart', async () => {
    const key = await account('/d2');
    for (const name of ['localhost', 'no spaces.com', '-bad.com', `${'a'.repeat(250)}.com`, '']) {
      expect((await rt.call('/domains', { method: 'POST', key, body: JSON.stringify({ name }) })).status, name).toBe(
        422,
      );
    }
    const reader = await rt.newKey({ scopes: ['domain:read'] });
    expect((await rt.call('/domains', { key: reader.key })).status).toBe(200);
    expect(
      (await rt.call('/domains', { method: 'POST', key: reader.key, body: '{"name":"x.example.com"}' })).status,
    ).toBe(403);
    const created = (await (
      await rt.call('/domains', { method: 'POST', key, body: '{"name":"y.example.com"}' })
    ).json()) as { id: string };
    const other = await rt.newKey();
    expect((await rt.call(`/domains/${created.id}`, { key: other.key })).status).toBe(404);
  });

  it('live mode sends only from verified domains (422 otherwise); test mode does not check', async () => {
    const live = await account('/d3', 'live');
    const email = { from: 'hi@news.example.org', to: 'b@example.com', subject: 's', text: 't' };
    const refused = await rt.call('/emails', { method: 'POST', key: live, body: JSON.stringify(email) });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { details: { path: string }[] }).details[0]?.path).toBe('from');
    const batch = await rt.call('/emails/batch', { method: 'POST', key: live, body: JSON.stringify([email, email]) });
    expect(((await batch.json()) as { details: { path: string }[] }).details.map((d) => d.path)).toEqual([
      '0.from',
      '1.from',
    ]);
    const domain = (await (
      await rt.call('/domains', { method: 'POST', key: live, body: '{"name":"news.example.org"}' })
    ).json()) as { id: string };
    await new Promise((r) => setTimeout(r, 450));
    await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key: live });
    expect((await rt.call('/emails', { method: 'POST', key: live, body: JSON.stringify(email) })).status).toBe(200);
    const test = await account('/d4');
    expect((await rt.call('/emails', { method: 'POST', key: test, body: JSON.stringify(email) })).status).toBe(200);
  });
});

describe('contacts', () => {
  it('creates a pending contact with a confirmation link; the link subscribes once (contact.subscribed)', async () => {
    const key = await account('/c1');
    const res = await rt.call('/contacts', {
      method: 'POST',
      key,
      body: JSON.stringify({ email: 'Ada@Example.com', first_name: 'Ada' }),
    });
    expect(res.status).toBe(201);
    const contact = (await res.json()) as { id: string; email: string; status: string; confirmation_url: string };
    expect(contact).toMatchObject({
      object: 'contact',
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: null,
      status: 'pending',
    });
    expect(contact.confirmation_url.startsWith(`${rt.url}/contacts/confirm/`)).toBe(true);
    expect((await rt.call('/contacts', { method: 'POST', key, body: '{"email":"ada@example.com"}' })).status).toBe(409);

    const page = await fetch(contact.confirmation_url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('method="post"');
    expect(((await (await rt.call(`/contacts/${contact.id}`, { key })).json()) as { status: string }).status).toBe(
      'pending',
    );

    expect((await fetch(contact.confirmation_url, { method: 'POST' })).status).toBe(200);
    expect((await fetch(contact.confirmation_url, { method: 'POST' })).status).toBe(200);
    expect(await (await rt.call(`/contacts/${contact.id}`, { key })).json()).toMatchObject({
      status: 'subscribed',
      subscribed_at: expect.any(String),
    });
    const forged = contact.confirmation_url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await fetch(forged, { method: 'POST' })).status).toBe(404);

    const updated = await rt.call(`/contacts/${contact.id}`, {
      method: 'PATCH',
      key,
      body: JSON.stringify({ last_name: 'Lovelace', first_name: null }),
    });
    expect(await updated.json()).toMatchObject({ first_name: null, last_name: 'Lovelace' });
    expect((await rt.call(`/contacts/${contact.id}`, { method: 'PATCH', key, body: '{}' })).status).toBe(422);
    expect((await rt.call(`/contacts/${contact.id}`, { method: 'DELETE', key })).status).toBe(200);
    expect((await rt.call(`/contacts/${contact.id}`, { key })).status).toBe(404);
    await settle();
    expect(events('/c1').map((e) => e.type)).toEqual([
      'contact.created',
      'contact.subscribed',
      'contact.updated',
      'contact.deleted',
    ]);
    expect(events('/c1')[1]?.data).toMatchObject({ id: contact.id, email: 'ada@example.com', status: 'subscribed' });
  });

  it('a confirmation link dies with its contact: after delete and re-create, the old link is a 410 page', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const create = () =>
      rt.call('/contacts', { method: 'POST', key, body: JSON.stringify({ email: 'kay@example.com' }) });
    const first = (await (await create()).json()) as { id: string; confirmation_url: string };
    expect((await rt.call(`/contacts/${first.id}`, { method: 'DELETE', key })).status).toBe(200);
    const again = (await (await create()).json()) as { id: string; confirmation_url: string };
    expect(again.id).toBe(first.id);

    // Act
    const oldPage = await fetch(first.confirmation_url);
    const oldConfirm = await fetch(first.confirmation_url, { method: 'POST' });

    // Assert: a clear page, and the re-created contact is still pending until its own link is used.
    for (const res of [oldPage, oldConfirm]) {
      expect(res.status).toBe(410);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('no longer valid');
    }
    expect(((await (await rt.call(`/contacts/${again.id}`, { key })).json()) as { status: string }).status).toBe(
      'pending',
    );
    expect((await fetch(again.confirmation_url, { method: 'POST' })).status).toBe(200);
    expect(((await (await rt.call(`/contacts/${again.id}`, { key })).json()) as { status: string }).status).toBe(
      'subscribed',
    );
  });

  it('needs a full-access key and keeps tenants apart', async () => {
    const key = await account('/c2');
    const created = (await (
      await rt.call('/contacts', { method: 'POST', key, body: '{"email":"b@example.com"}' })
    ).json()) as { id: string };
    const limited = await rt.newKey({ scopes: ['email:send', 'email:read'] });
    expect((await rt.call('/contacts', { key: limited.key })).status).toBe(403);
    const other = await rt.newKey();
    expect((await rt.call(`/contacts/${created.id}`, { key: other.key })).status).toBe(404);
    const list = (await (await rt.call('/contacts', { key })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(1);
    expect((await rt.call('/contacts', { method: 'POST', key, body: '{"email":"not-an-email"}' })).status).toBe(422);
  });
});

describe('domain names across accounts', () => {
  it('a name held by one account is 409 domain_taken for another, until the holder deletes it', async () => {
    const a = await account('/x1', 'live');
    const b = await account('/x2', 'live');
    const held = (await (
      await rt.call('/domains', { method: 'POST', key: a, body: '{"name":"shared.example.com"}' })
    ).json()) as { id: string };
    const taken = await rt.call('/domains', { method: 'POST', key: b, body: '{"name":"shared.example.com"}' });
    expect(taken.status).toBe(409);
    expect(await taken.json()).toMatchObject({ code: 'domain_taken' });
    await rt.call(`/domains/${held.id}`, { method: 'DELETE', key: a });
    expect((await rt.call('/domains', { method: 'POST', key: b, body: '{"name":"shared.example.com"}' })).status).toBe(
      201,
    );
  });
  it('a test-mode domain never blocks another account’s live domain of that name, nor frees it when deleted', async () => {
    // Arrange: a test-mode key adds the name first (test mode never touches SES).
    const { key: squatter } = await rt.newKey({ mode: 'test' });
    const { key: owner } = await rt.newKey({ mode: 'live' });
    const { key: third } = await rt.newKey({ mode: 'live' });
    const body = '{"name":"claimed-in-test.example.com"}';
    const test = await rt.call('/domains', { method: 'POST', key: squatter, body });
    expect(test.status).toBe(201);

    // Act
    const live = await rt.call('/domains', { method: 'POST', key: owner, body });
    await rt.call(`/domains/${((await test.json()) as { id: string }).id}`, { method: 'DELETE', key: squatter });
    const after = await rt.call('/domains', { method: 'POST', key: third, body });

    // Assert
    expect(live.status).toBe(201);
    expect(await live.json()).toMatchObject({ name: 'claimed-in-test.example.com', status: 'pending' });
    expect(after.status).toBe(409);
    expect(await after.json()).toMatchObject({ code: 'domain_taken' });
  });
});
