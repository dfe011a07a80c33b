// A domain-restricted sending key (Resend's `permission: sending_access` + `domain_id`) over real HTTP, on every
// route it may call (the manifest's email:send routes): it acts only on emails from its domain (another domain's
// are 404, as an unknown id), and a key that cannot read emails is answered `{object, id}`, never the email.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lambdas/manifest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());

const at = (ms: number) => new Date(Date.now() + ms).toISOString();
const json = (body: unknown) => JSON.stringify(body);

interface Setup {
  admin: string;
  restricted: string;
  /** Scheduled by the admin key: an invoice from billing (another domain), and one from marketing. */
  billing: string;
  marketing: string;
  /** Its domains are marketing.a<n>.example.com and billing.a<n>.example.com. */
  n: number;
}

let accounts = 0;

async function setup(): Promise<Setup> {
  const { key: admin } = await rt.newKey({ mode: 'live' });
  // A domain belongs to one account: each account its own names (the same subdomains under a label of its own).
  const n = ++accounts;
  const name = (label: string) => `${label}.a${n}.example.com`;
  const ids: Record<string, string> = {};
  for (const label of ['marketing', 'billing']) {
    const d = (await (
      await rt.call('/domains', { method: 'POST', key: admin, body: json({ name: name(label) }) })
    ).json()) as {
      id: string;
    };
    await rt.call(`/domains/${d.id}/verify`, { method: 'POST', key: admin });
    ids[label] = d.id;
  }
  const created = await rt.call('/api-keys', {
    method: 'POST',
    key: admin,
    body: json({ name: 'mkt', permission: 'sending_access', domain_id: ids.marketing }),
  });
  const { token: restricted } = (await created.json()) as { token: string };
  const schedule = async (from: string) => {
    const res = await rt.call('/emails', {
      method: 'POST',
      key: admin,
      body: json({
        from,
        to: 'customer@example.org',
        bcc: 'audit@example.org',
        subject: 'Your invoice #42',
        text: 'secret invoice text',
        scheduled_at: at(3_600_000),
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  return {
    admin,
    restricted,
    billing: await schedule(`invoices@${name('billing')}`),
    marketing: await schedule(`news@${name('marketing')}`),
    n,
  };
}

const message = (from: string) => ({ from, to: 'customer@example.org', subject: 's', text: 't' });
const read = async (key: string, id: string) =>
  (await (await rt.call(`/emails/${id}`, { key })).json()) as { status: string; scheduled_at: string };

/** Each email:send route: what the restricted key may and may not do there. */
const cases: Record<string, (s: Setup) => Promise<void>> = {
  sendEmail: async ({ restricted, n }) => {
    const other = await rt.call('/emails', {
      method: 'POST',
      key: restricted,
      body: json(message(`a@billing.a${n}.example.com`)),
    });
    expect(other.status).toBe(403);
    const own = await rt.call('/emails', {
      method: 'POST',
      key: restricted,
      body: json(message(`a@marketing.a${n}.example.com`)),
    });
    expect(own.status).toBe(200);
  },
  sendEmailBatch: async ({ restricted, n }) => {
    const mixed = [message(`a@marketing.a${n}.example.com`), message(`a@billing.a${n}.example.com`)];
    expect((await rt.call('/emails/batch', { method: 'POST', key: restricted, body: json(mixed) })).status).toBe(403);
    const own = [message(`a@marketing.a${n}.example.com`), message(`b@marketing.a${n}.example.com`)];
    expect((await rt.call('/emails/batch', { method: 'POST', key: restricted, body: json(own) })).status).toBe(200);
  },
  updateEmail: async ({ admin, restricted, billing, marketing }) => {
    const before = await read(admin, billing);
    const later = at(7_200_000);
    const other = await rt.call(`/emails/${billing}`, {
      method: 'PATCH',
      key: restricted,
      body: json({ scheduled_at: later }),
    });
    const unknown = await rt.call('/emails/email_0000000000000000000000000z', {
      method: 'PATCH',
      key: restricted,
      body: json({ scheduled_at: later }),
    });
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    const [a, b] = [(await other.json()) as { code: string }, (await unknown.json()) as { code: string }];
    expect(a.code).toBe(b.code);
    expect(JSON.stringify(a)).not.toContain('invoice');
    expect((await read(admin, billing)).scheduled_at).toBe(before.scheduled_at);

    const own = await rt.call(`/emails/${marketing}`, {
      method: 'PATCH',
      key: restricted,
      body: json({ scheduled_at: later }),
    });
    expect(own.status).toBe(200);
    // Without email:read: Resend's answer, and nothing of the email.
    expect(await own.json()).toEqual({ object: 'email', id: marketing });
    expect((await read(admin, marketing)).scheduled_at).toBe(later);
  },
  cancelEmail: async ({ admin, restricted, billing, marketing }) => {
    const other = await rt.call(`/emails/${billing}/cancel`, { method: 'POST', key: restricted });
    expect(other.status).toBe(404);
    expect((await read(admin, billing)).status).toBe('scheduled');
    const own = await rt.call(`/emails/${marketing}/cancel`, { method: 'POST', key: restricted });
    expect(own.status).toBe(200);
    expect(await own.json()).toEqual({ object: 'email', id: marketing });
    expect((await read(admin, marketing)).status).toBe('canceled');
  },
};

describe('a domain-restricted sending key', () => {
  it('the cases below cover every email:send route', () => {
    const sendRoutes = routes
      .filter((r) => typeof r.access === 'object' && r.access.scope === 'email:send')
      .map((r) => r.id)
      .sort();
    expect(Object.keys(cases).sort()).toEqual(sendRoutes);
  });

  it.each(Object.keys(cases))('%s: only its own domain, and nothing of an email it cannot read', async (route) => {
    await (cases[route] as (s: Setup) => Promise<void>)(await setup());
  });

  it('an unrestricted sending key (no email:read) gets the minimal answer; a full key the whole email', async () => {
    const s = await setup();
    const created = await rt.call('/api-keys', {
      method: 'POST',
      key: s.admin,
      body: json({ name: 'any', permission: 'sending_access' }),
    });
    const { token } = (await created.json()) as { token: string };
    const moved = await rt.call(`/emails/${s.billing}`, {
      method: 'PATCH',
      key: token,
      body: json({ scheduled_at: at(5_400_000) }),
    });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toEqual({ object: 'email', id: s.billing });
    const full = await rt.call(`/emails/${s.marketing}/cancel`, { method: 'POST', key: s.admin });
    expect(full.status).toBe(200);
    expect(await full.json()).toMatchObject({ id: s.marketing, status: 'canceled', bcc: ['audit@example.org'] });
  });
});
