// GET /v1/emails over real HTTP: the caller's emails newest first, paged with `after` without gaps or repeats,
// filtered by status (from each email's history, as GET /v1/emails/:id reports it) and by recipient
// (case-insensitive); bad parameters are 422; another account or mode sees none; it needs email:read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());

interface EmailView {
  readonly object: string;
  readonly id: string;
  readonly to: string[];
  readonly status: string;
  readonly [field: string]: unknown;
}
interface ListBody {
  readonly object: string;
  readonly has_more: boolean;
  readonly next_after: string | null;
  readonly data: EmailView[];
}

const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;
const email = (to: string | string[], extra: Record<string, unknown> = {}) => ({
  from: 'Acme <hi@acme.test>',
  to,
  subject: 'Hello',
  html: '<p>x</p>',
  ...extra,
});

async function send(key: string, body: unknown): Promise<string> {
  const res = await rt.call('/emails', { method: 'POST', key, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await json<{ id: string }>(res)).id;
}

async function list(key: string, query = ''): Promise<ListBody> {
  const res = await rt.call(`/emails${query}`, { key });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  return json<ListBody>(res);
}

/** Every email through `after` cursors, `limit` a page; the pages' sizes too. */
async function walk(key: string, limit: number, filter = ''): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let after = '';
  for (;;) {
    const page = await list(key, `?limit=${limit}${filter}${after ? `&after=${after}` : ''}`);
    ids.push(...page.data.map((e) => e.id));
    sizes.push(page.data.length);
    // One way to page: next_after, null on the last page, the last item's id otherwise (no filter here reaches the
    // examine bound: that is test/unit/app-email-lists.test.ts).
    if (!page.has_more) {
      expect(page.next_after).toBeNull();
      return { ids, sizes };
    }
    expect(page.next_after).toBe(page.data.at(-1)?.id);
    after = page.next_after ?? '';
  }
}

const newestFirst = (ids: readonly string[]) => [...ids].sort().reverse();

describe('GET /v1/emails', () => {
  it('lists the caller’s emails newest first, each as GET /v1/emails/:id shows it (without its events and bodies)', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push(await send(key, email(`success+${i}@simulator.amazonses.com`)));
    await rt.settle();

    // Act
    const page = await list(key);

    // Assert
    expect(page.object).toBe('list');
    expect(page.has_more).toBe(false);
    expect(page.data.map((e) => e.id)).toEqual(newestFirst(sent));
    for (const item of page.data) {
      const { events, events_truncated, html, text, attachments, ...single } = await json<
        EmailView & { html: unknown; text: unknown; attachments: unknown }
      >(await rt.call(`/emails/${item.id}`, { key }));
      // The list leaves attachments out too (EmailSummary), as it does the bodies.
      expect(attachments).toEqual([]);
      expect(events).toBeDefined();
      expect(html).toBe('<p>x</p>');
      expect(item).not.toHaveProperty('html');
      expect(events_truncated).toBe(false);
      expect(item).toEqual(single);
      expect(item.status).toBe('delivered');
    }
  });

  it('pages with limit and after across pages without gaps or repeats, has_more false exactly on the last', async () => {
    // Arrange: 11 emails, some in one batch (ids of the same millisecond still have one order).
    const { key } = await rt.newKey();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push(await send(key, email(`reader${i}@example.com`)));
    const batch = await rt.call('/emails/batch', {
      method: 'POST',
      key,
      body: JSON.stringify(Array.from({ length: 6 }, (_, i) => email(`batch${i}@example.com`))),
    });
    expect(batch.status).toBe(200);
    sent.push(...(await json<{ data: { id: string }[] }>(batch)).data.map((d) => d.id));

    // Act
    const byThree = await walk(key, 3);
    const byEleven = await walk(key, 11);
    const byOne = await walk(key, 1);

    // Assert
    expect(byThree.ids).toEqual(newestFirst(sent));
    expect(byThree.sizes).toEqual([3, 3, 3, 2]);
    expect(byEleven).toEqual({ ids: newestFirst(sent), sizes: [11] });
    expect(byOne.ids).toEqual(newestFirst(sent));
    expect((await list(key)).data).toHaveLength(11);
    expect((await list(key, '?limit=2')).has_more).toBe(true);
  });

  it('filters by status as GET /v1/emails/:id reports it, through pages', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const bounced: string[] = [];
    const delivered: string[] = [];
    for (let i = 0; i < 4; i++) {
      bounced.push(await send(key, email(`bounce+${i}@simulator.amazonses.com`)));
      delivered.push(await send(key, email(`success+${i}@simulator.amazonses.com`)));
    }
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await send(key, email('success@simulator.amazonses.com', { scheduled_at: later }));
    const canceled = await send(key, email('success@simulator.amazonses.com', { scheduled_at: later }));
    const beforeCancel = Date.now();
    expect((await rt.call(`/emails/${canceled}/cancel`, { method: 'POST', key })).status).toBe(200);
    await rt.settle();

    // Act / Assert
    expect(await walk(key, 3, '&status=bounced')).toEqual({ ids: newestFirst(bounced), sizes: [3, 1] });
    expect((await walk(key, 2, '&status=delivered')).ids).toEqual(newestFirst(delivered));
    expect((await list(key, '?status=scheduled')).data.map((e) => e.id)).toEqual([scheduled]);
    expect((await list(key, '?status=canceled')).data.map((e) => e.id)).toEqual([canceled]);
    // Issue 31: when it was canceled (the dashboard shows it instead of the creation time); null on the others.
    const [canceledItem] = (await list(key, '?status=canceled')).data as unknown as { canceled_at: string | null }[];
    expect(Date.parse(canceledItem?.canceled_at ?? '')).toBeGreaterThanOrEqual(beforeCancel - 1000);
    expect(
      ((await list(key, '?status=scheduled')).data[0] as unknown as { canceled_at: unknown }).canceled_at,
    ).toBeNull();
    expect(await list(key, '?status=clicked')).toEqual({ object: 'list', has_more: false, next_after: null, data: [] });
    const exact = await list(key, '?status=bounced&limit=4');
    expect(exact.data).toHaveLength(4);
    expect(exact.has_more).toBe(false);
    for (const item of (await list(key, '?status=bounced')).data) {
      expect((await json<EmailView>(await rt.call(`/emails/${item.id}`, { key }))).status).toBe('bounced');
    }
  });

  it('filters by a recipient, case-insensitive, exact (among to, cc and bcc), with the other filters', async () => {
    // Arrange
    const { key } = await rt.newKey();
    const toAda = await send(key, email('Ada <ada@example.com>'));
    const ccAda = await send(key, email('bob@example.com', { cc: 'ADA@example.com' }));
    await send(key, email('bob@example.com'));
    await send(key, email('ada@example.com.evil.test'));
    await send(key, email('xada@example.com'));
    await rt.settle();

    // Act
    const ada = await list(key, '?to=Ada@Example.COM');
    const paged = await walk(key, 1, '&to=ada%40example.com');

    // Assert
    expect(ada.data.map((e) => e.id)).toEqual(newestFirst([toAda, ccAda]));
    expect(paged).toEqual({ ids: newestFirst([toAda, ccAda]), sizes: [1, 1] });
    expect((await list(key, '?to=carol@example.com')).data).toEqual([]);
    // Other addresses behave like the simulator's success@ locally: delivered.
    const both = await list(key, '?to=ada@example.com&status=delivered&limit=1');
    expect(both.data.map((e) => e.id)).toEqual(newestFirst([toAda, ccAda]).slice(0, 1));
    expect(both.has_more).toBe(true);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['status=lost', 'status'],
    ['status=unsubscribed', 'status'],
    ['after=wh_01abc', 'after'],
    ['after=', 'after'],
    ['to=not-an-address', 'to'],
    ['to=Ada%20%3Cada%40example.com%3E', 'to'],
    ['page=2', 'page'],
  ])('refuses ?%s with 422 naming %s', async (query, path) => {
    const { key } = await rt.newKey();
    const res = await rt.call(`/emails?${query}`, { key });
    expect(res.status).toBe(422);
    const body = await json<{ details: { path: string }[] }>(res);
    expect(body.details.map((d) => d.path)).toContain(path);
  });

  it('accepts the limit bounds 1 and 100', async () => {
    const { key } = await rt.newKey();
    await send(key, email('a@example.com'));
    await send(key, email('b@example.com'));
    expect((await list(key, '?limit=1')).data).toHaveLength(1);
    expect((await list(key, '?limit=100')).data).toHaveLength(2);
  });

  it('shows another account, and the same account in the other mode, none of the emails', async () => {
    // Arrange
    const owner = await rt.newKey();
    const sent = await send(owner.key, email('ada@example.com'));
    const stranger = await rt.newKey();
    const { secret: ownerLive } = await createAccountKey(rt.admin, { accountId: owner.accountId, mode: 'live' });

    // Act / Assert
    expect((await list(owner.key)).data.map((e) => e.id)).toEqual([sent]);
    for (const key of [stranger.key, ownerLive]) {
      expect(await list(key)).toEqual({ object: 'list', has_more: false, next_after: null, data: [] });
      expect((await list(key, '?to=ada@example.com')).data).toEqual([]);
      expect((await list(key, `?after=${sent}0`)).data).toEqual([]);
    }
  });

  it('needs email:read: an email:send-only key gets 403', async () => {
    const sender = await rt.newKey({ scopes: ['email:send'] });
    const reader = await rt.newKey({ scopes: ['email:read'] });
    const denied = await rt.call('/emails', { key: sender.key });
    expect(denied.status).toBe(403);
    expect(JSON.stringify(await denied.json())).toContain('email:read');
    expect((await rt.call('/emails', { key: reader.key })).status).toBe(200);
  });
});
