// POST /v1/emails and /v1/emails/batch over real HTTP, and the simulator's event stories as a webhook
// receives them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../lambdas/domain/events';
import { defaultStoredFormats, withheldEventTypes } from '../../lambdas/domain/stored-formats';
import { type Receiver, startReceiver } from '../support/receiver';
import { atWindowStart, startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  // The reputation event's switch on, so a webhook may subscribe to every type (test mode is not judged here).
  rt = await startTestRuntime({ SF_REPUTATION_EVENTS: 'true' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

const email = (to: unknown, extra: Record<string, unknown> = {}) => ({
  from: 'Acme <hi@acme.test>',
  to,
  subject: 'Hello',
  html: '<p>x</p>',
  ...extra,
});
const post = (key: string, path: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });

describe('POST /v1/emails', () => {
  it('accepts an email and returns its id; needs email:send', async () => {
    const { key } = await rt.newKey({ scopes: ['email:send'] });
    const res = await post(key, '/emails', email('bob@example.com'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: expect.stringMatching(/^email_/) });
    const reader = await rt.newKey({ scopes: ['webhook:read'] });
    expect((await post(reader.key, '/emails', email('bob@example.com'))).status).toBe(403);
  });

  it('refuses invalid emails with 422 and a detail per problem', async () => {
    const { key } = await rt.newKey();
    const res = await post(key, '/emails', { from: 'nobody', to: [], subject: '' });
    expect(res.status).toBe(422);
    const paths = ((await res.json()) as { details: { path: string }[] }).details.map((d) => d.path).sort();
    expect(paths).toEqual(expect.arrayContaining(['from', 'subject', 'to']));
    const tooMany = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
    expect((await post(key, '/emails', email(tooMany))).status).toBe(422);
    expect((await post(key, '/emails', { from: 'a@acme.test', to: 'b@example.com', subject: 's' })).status).toBe(422);
    const huge = await post(key, '/emails', email('b@example.com', { html: 'x'.repeat(300 * 1024) }));
    expect(huge.status).toBe(422);
    // The whole email as stored is measured (DynamoDB's item, not html alone): the detail is on the body.
    expect(((await huge.json()) as { details: { path: string }[] }).details[0]?.path).toBe('body');
  });

  const EXAMPLE = 'E.g. a@example.com or "Name <a@example.com>".';
  it.each([
    [{ to: 5 }, [{ path: 'to', message: '`to` must be an email address or a list of email addresses.' }]],
    [{ to: null }, [{ path: 'to', message: '`to` must be an email address or a list of email addresses.' }]],
    [{ to: undefined }, [{ path: 'to', message: '`to` is required: an email address or a list of email addresses.' }]],
    [
      { to: 'not-an-email' },
      [{ path: 'to', message: `\`to\` is not an email address: "not-an-email" (an address needs an @). ${EXAMPLE}` }],
    ],
    [{ to: [] }, [{ path: 'to', message: '`to` must list at least one email address (the list is empty).' }]],
    [
      { to: ['b@example.com', 'b@', 7] },
      [
        {
          path: 'to.1',
          message: `\`to[1]\` is not an email address: "b@" (the part after @ must be a domain name such as example.com). ${EXAMPLE}`,
        },
        { path: 'to.2', message: `\`to[2]\` must be an email address (a string). ${EXAMPLE}` },
      ],
    ],
    [
      { to: 'b@example.com', scheduled_at: 'next tuesday-ish' },
      [
        {
          path: 'scheduled_at',
          message:
            '`scheduled_at` is not a time Sendflow can read: "next tuesday-ish". Give an ISO 8601 date-time with a time zone, or words, e.g. "2026-12-01T09:00:00Z", "in 1 min", "in 2 hours", "tomorrow at 9am", "friday at 3pm ET", "tomorrow at 09:30 Europe/Paris" (no time zone: UTC).',
        },
      ],
    ],
    [
      { to: 'b@example.com', scheduled_at: '2020-01-01T09:00:00Z' },
      [
        {
          path: 'scheduled_at',
          message: '`scheduled_at` must be in the future; "2020-01-01T09:00:00Z" is 2020-01-01T09:00:00.000Z.',
        },
      ],
    ],
    [
      { to: 'b@example.com', scheduled_at: 'in 31 days' },
      [
        {
          path: 'scheduled_at',
          message: expect.stringMatching(/^`scheduled_at` must be at most 30 days from now; "in 31 days" is 20\d\d-/),
        },
      ],
    ],
  ])('says exactly what is wrong with %j', async (fields, details) => {
    const { key } = await rt.newKey();
    const res = await post(key, '/emails', { ...email('x'), ...fields });
    expect(res.status).toBe(422);
    // The first problem is the message; the others are counted there and listed in details.
    const message =
      details.length > 1 ? `${details[0]?.message} (1 more problem in \`details\`.)` : details[0]?.message;
    expect(await res.json()).toEqual({
      error: message,
      status: 422,
      code: 'validation_error',
      name: expect.stringMatching(/^(validation_error|missing_required_field|invalid_from_address)$/),
      message,
      statusCode: 422,
      details,
    });
  });
});

describe('POST /v1/emails/batch', () => {
  it('accepts 1–100 emails and returns their ids in order', async () => {
    const { key } = await rt.newKey();
    const res = await post(
      key,
      '/emails/batch',
      Array.from({ length: 100 }, (_, i) => email(`u${i}@example.com`)),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { id: string }[] };
    expect(body.data).toHaveLength(100);
    expect(new Set(body.data.map((d) => d.id)).size).toBe(100);
    expect((await post(key, '/emails/batch', [])).status).toBe(422);
    expect(
      (
        await post(
          key,
          '/emails/batch',
          Array.from({ length: 101 }, () => email('a@example.com')),
        )
      ).status,
    ).toBe(422);
  });

  it('is all or nothing: one bad email refuses the batch, with its index in the details', async () => {
    const { key } = await rt.newKey();
    const hook = (await (
      await post(key, '/webhooks', { url: `${receiver.url}/all`, events: ['email.sent'] })
    ).json()) as { id: string };
    const before = receiver.received.length;
    const res = await post(key, '/emails/batch', [
      email('ok@example.com'),
      email('not-an-address'),
      email('fine@example.com', { subject: '' }),
    ]);
    expect(res.status).toBe(422);
    const details = ((await res.json()) as { details: { path: string }[] }).details.map((d) => d.path);
    expect(details).toEqual(['1.to', '2.subject']);
    await rt.settle();
    expect(receiver.received.length).toBe(before);
    const log = (await (await rt.call(`/webhooks/${hook.id}/deliveries`, { key })).json()) as { data: unknown[] };
    expect(log.data).toHaveLength(0);
  });

  it('counts as one request toward the rate limit', async () => {
    const { key } = await rt.newKey({ plan: 'free' });
    await atWindowStart(800);
    const res = await post(
      key,
      '/emails/batch',
      Array.from({ length: 20 }, () => email('a@example.com')),
    );
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9');
  });
});

describe('the simulator stories', () => {
  const stories: [string, string[]][] = [
    ['success@simulator.amazonses.com', ['email.sent', 'email.delivered']],
    ['bounce@simulator.amazonses.com', ['email.sent', 'email.bounced']],
    ['complaint@simulator.amazonses.com', ['email.sent', 'email.delivered', 'email.complained']],
    ['suppressionlist@simulator.amazonses.com', ['email.sent', 'email.bounced']],
    ['ooto@simulator.amazonses.com', ['email.sent', 'email.delivered']],
    ['delay@simulator.amazonses.com', ['email.sent', 'email.delivery_delayed', 'email.delivered']],
    ['open@simulator.amazonses.com', ['email.sent', 'email.delivered', 'email.opened']],
    ['click@simulator.amazonses.com', ['email.sent', 'email.delivered', 'email.opened', 'email.clicked']],
    ['accountsuppressed@simulator.amazonses.com', ['email.sent', 'email.bounced', 'email.failed']],
    // SES took it (SendEmail succeeded: the send worker's email.sent, as SES's own Send), then refused it.
    ['reject@simulator.amazonses.com', ['email.sent', 'email.failed']],
    ['bounce+signup-42@simulator.amazonses.com', ['email.sent', 'email.bounced']],
    ['someone@example.com', ['email.sent', 'email.delivered']],
  ];

  it.each(stories)('%s → %j', async (to, expected) => {
    const { key } = await rt.newKey();
    const path = `/${encodeURIComponent(to)}`;
    // Every email event the runtime sends by default (a stored format's events wait for its switch); an
    // account's events (a bounce's suppression.added) carry no email and are another story's.
    const withheld = withheldEventTypes(defaultStoredFormats());
    const events = EVENT_TYPES.filter((type) => type.startsWith('email.') && !withheld.includes(type));
    await post(key, '/webhooks', { url: `${receiver.url}${path}`, events });
    const sent = (await (await post(key, '/emails', email(to))).json()) as { id: string };
    await rt.settle();
    const mine = receiver.received
      .filter((r) => r.path === path)
      .map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(mine.map((e) => e.type).sort()).toEqual([...expected].sort());
    for (const event of mine)
      expect(event).toMatchObject({
        email_id: sent.id,
        to: to.toLowerCase(),
        data: { from: 'Acme <hi@acme.test>', subject: 'Hello' },
      });
    const bounce = mine.find((e) => e.type === 'email.bounced') as { data: Record<string, unknown> } | undefined;
    if (to.startsWith('accountsuppressed')) {
      expect(bounce?.data).toMatchObject({
        bounce_sub_type: 'OnAccountSuppressionList',
        refused_by_account_suppression_list: true,
      });
    } else if (to.startsWith('suppressionlist')) {
      expect(bounce?.data).toMatchObject({
        bounce_type: 'Permanent',
        bounce_sub_type: 'Suppressed',
        refused_by_account_suppression_list: false,
      });
    } else if (bounce) {
      expect(bounce.data).toMatchObject({
        bounce_type: 'Permanent',
        bounce_sub_type: 'General',
        refused_by_account_suppression_list: false,
      });
    }
  });

  it('gives each recipient of a multi-recipient email its own events', async () => {
    const { key } = await rt.newKey();
    await post(key, '/webhooks', { url: `${receiver.url}/multi`, events: ['email.delivered', 'email.bounced'] });
    await post(
      key,
      '/emails',
      email(['success@simulator.amazonses.com', 'bounce@simulator.amazonses.com'], { cc: 'carol@example.com' }),
    );
    await rt.settle();
    const got = receiver.received
      .filter((r) => r.path === '/multi')
      .map((r) => JSON.parse(r.body) as { type: string; to: string });
    expect(got.map((e) => `${e.type} ${e.to}`).sort()).toEqual([
      'email.bounced bounce@simulator.amazonses.com',
      'email.delivered carol@example.com',
      'email.delivered success@simulator.amazonses.com',
    ]);
  });
});

describe('GET /v1/emails/:id', () => {
  it('shows the status from the latest event and the whole history, once per event', async () => {
    const { key, accountId } = await rt.newKey();
    const sent = (await (
      await post(key, '/emails', email('complaint@simulator.amazonses.com', { cc: 'c@example.com' }))
    ).json()) as {
      id: string;
    };
    await rt.settle();
    const res = await rt.call(`/emails/${sent.id}`, { key });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown> & { events: { type: string; to: string }[] };
    expect(body).toMatchObject({
      object: 'email',
      id: sent.id,
      from: 'Acme <hi@acme.test>',
      to: ['complaint@simulator.amazonses.com'],
      cc: ['c@example.com'],
      subject: 'Hello',
      status: 'complained',
    });
    expect(body.events.map((e) => `${e.type} ${e.to}`).sort()).toEqual([
      'email.complained complaint@simulator.amazonses.com',
      'email.delivered c@example.com',
      'email.delivered complaint@simulator.amazonses.com',
      'email.sent c@example.com',
      'email.sent complaint@simulator.amazonses.com',
    ]);

    // A redelivered event is recorded once.
    const [first] = body.events as unknown as { id: string; type: string; to: string; timestamp: string }[];
    const again = {
      id: first?.id ?? '',
      type: first?.type as 'email.sent',
      accountId,
      mode: 'test' as const,
      emailId: sent.id,
      timestamp: first?.timestamp ?? '',
      data: {},
    };
    await rt.services.events.publish([again]);
    await rt.settle();
    const after = (await (await rt.call(`/emails/${sent.id}`, { key })).json()) as { events: unknown[] };
    expect(after.events).toHaveLength(5);
  });

  it('is 404 for another account or mode, and needs email:read', async () => {
    const { key } = await rt.newKey();
    const sent = (await (await post(key, '/emails', email('a@example.com'))).json()) as { id: string };
    const other = await rt.newKey();
    expect((await rt.call(`/emails/${sent.id}`, { key: other.key })).status).toBe(404);
    const sender = await rt.newKey({ scopes: ['email:send'] });
    expect((await rt.call(`/emails/${sent.id}`, { key: sender.key })).status).toBe(403);
    expect((await rt.call('/emails/email_nope', { key })).status).toBe(404);
  });
});
