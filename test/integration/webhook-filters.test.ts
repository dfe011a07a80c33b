// Webhook payload filters over real HTTP (docs/webhooks.md, "Filters"): a webhook filtered on `data.to` and a tag
// receives only the matching events at a local receiver while an unfiltered one receives all; filtered_24h counts
// the rest; a filter is checked on create and update (422 with its path, nothing written); POST
// /v1/webhooks/filter-test answers match, no match with the failing clause, and 422 for a bad filter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;

beforeAll(async () => {
  [rt, receiver] = await Promise.all([startTestRuntime(), startReceiver()]);
});
afterAll(async () => {
  await receiver?.close();
  await rt?.stop();
});

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });
const post = (path: string, key: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });

describe('a filtered webhook over real HTTP', () => {
  it('receives only events matching data.to and a tag; filtered_24h counts the others', async () => {
    // Arrange: one webhook filtered on the recipient and the plan tag, one without a filter, both on the receiver.
    const { key } = await rt.newKey();
    const filter = { data: { to: 'keep@example.com' }, tags: { plan: 'pro' } };
    const events = ['email.sent', 'email.delivered'];
    const filtered = await json(await post('/webhooks', key, { url: `${receiver.url}/filtered`, events, filter }));
    const all = await json(await post('/webhooks', key, { url: `${receiver.url}/all`, events }));
    expect(filtered.status).toBe(201);
    expect(filtered.body.filter).toEqual(filter);
    expect(all.body.filter).toBeNull();
    const send = (to: string, plan: string) =>
      post('/emails', key, {
        from: 'news@acme.test',
        to,
        subject: `for ${to} on ${plan}`,
        text: 'hi',
        tags: [{ name: 'plan', value: plan }],
      });

    // Act: the matching email, one with another plan, one to another recipient.
    const sent = await Promise.all([
      send('keep@example.com', 'pro'),
      send('keep@example.com', 'free'),
      send('other@example.com', 'pro'),
    ]);
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
    const keptId = ((await (sent[0] as Response).json()) as { id: string }).id;
    await rt.settle();

    // Assert: the filtered endpoint got the two events of the matching email; the other got all six.
    const at = (path: string) =>
      receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    const got = at('/filtered');
    expect(got.map((p) => p.type).sort()).toEqual(['email.delivered', 'email.sent']);
    for (const payload of got) expect(payload).toMatchObject({ email_id: keptId, to: 'keep@example.com' });
    expect(at('/all')).toHaveLength(6);
    // No delivery rows for what the filter kept back: the log holds the two delivered ones only.
    const log = await json(await rt.call(`/webhooks/${filtered.body.id}/deliveries`, { key }));
    expect((log.body.data as unknown[]).length).toBe(2);
    const read = await json(await rt.call(`/webhooks/${filtered.body.id}`, { key }));
    expect(read.body).toMatchObject({ filter, filtered_24h: 4 });
    expect((await json(await rt.call(`/webhooks/${all.body.id}`, { key }))).body.filtered_24h).toBe(0);
  });
});

describe('a filter on create and update', () => {
  it('refuses a bad filter with 422 naming its path, and writes nothing', async () => {
    const { key } = await rt.newKey();
    const res = await json(
      await post('/webhooks', key, {
        url: `${receiver.url}/x`,
        events: ['email.sent'],
        filter: { data: { to: { $regex: '.*@acme' } }, typo: 1 },
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_error', status: 422 });
    expect(res.body.details).toEqual([
      { path: 'filter.data.to.$regex', message: expect.stringContaining('is not an operator') },
      { path: 'filter.typo', message: expect.stringContaining('is not a field of an event') },
    ]);
    expect(res.body.error).toMatch(/^`filter.data.to\["\$regex"\]` is not an operator/);
    expect(((await json(await rt.call('/webhooks', { key }))).body.data as unknown[]).length).toBe(0);
  });

  it('sets, keeps and removes a filter with PUT; a bad one leaves the webhook as it was', async () => {
    const { key } = await rt.newKey();
    const created = await json(await post('/webhooks', key, { url: `${receiver.url}/x`, events: ['email.bounced'] }));
    const id = String(created.body.id);
    const put = (body: unknown) => rt.call(`/webhooks/${id}`, { method: 'PUT', key, body: JSON.stringify(body) });
    const filter = { $or: [{ data: { to: { $in: ['a@example.com'] } } }, { tags: { plan: 'pro' } }] };
    expect((await json(await put({ filter }))).body.filter).toEqual(filter);
    expect((await json(await put({ active: true }))).body.filter).toEqual(filter);
    const bad = await json(await put({ filter: { data: { amount: { $gt: [1] } } } }));
    expect(bad.status).toBe(422);
    expect(bad.body.details).toEqual([{ path: 'filter.data.amount.$gt', message: expect.any(String) }]);
    expect((await json(await rt.call(`/webhooks/${id}`, { key }))).body.filter).toEqual(filter);
    expect((await json(await put({ filter: null }))).body.filter).toBeNull();
    expect((await json(await put({ filter }))).body.filter).toEqual(filter);
    expect((await json(await put({ filter: {} }))).body.filter).toBeNull();
  });
});

describe('POST /v1/webhooks/filter-test', () => {
  const event = {
    type: 'email.bounced',
    to: 'ada@example.com',
    data: { to: ['ada@example.com'], bounce: { type: 'Permanent' } },
    tags: { plan: 'pro' },
  };

  it('answers a match', async () => {
    const { key } = await rt.newKey({ scopes: ['webhook:read'] });
    const res = await json(await post('/webhooks/filter-test', key, { filter: { tags: { plan: 'pro' } }, event }));
    expect(res).toEqual({ status: 200, body: { matches: true, reason: null } });
  });

  it('answers no match with the clause that failed', async () => {
    const { key } = await rt.newKey();
    const filter = { type: 'email.bounced', data: { to: { $in: ['bob@example.com'] } } };
    const res = await json(await post('/webhooks/filter-test', key, { filter, event }));
    expect(res).toEqual({
      status: 200,
      body: { matches: false, reason: '`data.to` is ["ada@example.com"], not in ["bob@example.com"]' },
    });
  });

  it('refuses a bad filter or event with 422 and the path of the mistake', async () => {
    const { key } = await rt.newKey();
    const bad = await json(
      await post('/webhooks/filter-test', key, { filter: { data: { x: { $exist: 'yes' } } }, event }),
    );
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({
      code: 'validation_error',
      details: [{ path: 'filter.data.x.$exist', message: expect.stringContaining('must be true or false') }],
    });
    const notEvent = await json(await post('/webhooks/filter-test', key, { filter: {}, event: [1] }));
    expect(notEvent.body).toMatchObject({ status: 422, details: [{ path: 'event', message: expect.any(String) }] });
    const missing = await json(await post('/webhooks/filter-test', key, { filter: {} }));
    expect(missing.status).toBe(422);
    const tooDeep = await json(await post('/webhooks/filter-test', key, { filter: 'x', event }));
    expect(tooDeep.body).toMatchObject({ details: [{ path: 'filter' }] });
  });

  it('needs webhook:read (403 otherwise)', async () => {
    const { key } = await rt.newKey({ scopes: ['email:send'] });
    expect((await post('/webhooks/filter-test', key, { filter: {}, event })).status).toBe(403);
  });
});
