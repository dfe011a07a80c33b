// Event-type and time-range filters on the delivery logs (a webhook's, an email's) and the email list over real
// HTTP on the local runtime: `event_type` (a comma list of known types), `since` (at or after) and `until`
// (before), as GET /v1/logs names its window; paging keeps them (`next_after` under the same filters reaches
// every match once); malformed, unknown or reversed values are 422 with the field named.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  // Simulated events 50 ms apart: the story's events (and so their deliveries) fall at distinct times.
  rt = await startTestRuntime({ SF_SIMULATOR_STEP_SECONDS: '0.05' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

interface Item {
  readonly id: string;
  readonly event?: string;
  readonly created_at: string;
}
interface ListBody {
  readonly has_more: boolean;
  readonly next_after: string | null;
  readonly data: Item[];
}
interface ErrorBody {
  readonly name: string;
  readonly message: string;
  readonly details?: { path: string; message: string }[];
}

const get = async <T>(key: string, path: string): Promise<{ status: number; body: T }> => {
  const res = await rt.call(path, { key });
  return { status: res.status, body: (await res.json()) as T };
};

/** Every page of a listing under `query`, following next_after with the same filters. */
async function all(key: string, path: string, query: Record<string, string>): Promise<Item[]> {
  const items: Item[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const qs: string = new URLSearchParams({ ...query, ...(after ? { after } : {}) }).toString();
    const { status, body }: { status: number; body: ListBody } = await get<ListBody>(key, `${path}?${qs}`);
    expect(status).toBe(200);
    items.push(...body.data);
    if (!body.has_more) return items;
    after = body.next_after;
  }
  throw new Error('did not end');
}

let key = '';
let hook = '';
let emails: string[] = [];
let everything: Item[] = [];

async function setUp() {
  if (hook) return;
  ({ key } = await rt.newKey());
  const res = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({
      url: `${receiver.url}/filters`,
      events: ['email.sent', 'email.delivered', 'email.bounced'],
    }),
  });
  hook = ((await res.json()) as { id: string }).id;
  emails = [];
  for (const to of [
    'success@simulator.amazonses.com',
    'bounce@simulator.amazonses.com',
    'success@simulator.amazonses.com',
  ]) {
    const sent = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'Acme <hi@acme.test>', to, subject: 'Filters', html: '<p>x</p>' }),
    });
    emails.push(((await sent.json()) as { id: string }).id);
    await rt.settle();
  }
  everything = await all(key, `/webhooks/${hook}/deliveries`, { limit: '100' });
}

/** The id's time part, as the filters read it (the time of the event the delivery carries). */
const timeOf = (item: Item) => {
  const time = /_([0-9a-z]{10})/.exec(item.id)?.[1] ?? '';
  let ms = 0;
  for (const c of time.toUpperCase()) ms = ms * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c);
  return ms;
};

describe('GET /v1/webhooks/:id/deliveries: event_type, since, until', () => {
  it('keeps the deliveries of the listed event types, on every page (limit 1)', async () => {
    await setUp();
    const types = new Set(everything.map((d) => d.event));
    expect(types).toEqual(new Set(['email.sent', 'email.delivered', 'email.bounced']));

    const bounced = await all(key, `/webhooks/${hook}/deliveries`, { event_type: 'email.bounced', limit: '1' });
    const two = await all(key, `/webhooks/${hook}/deliveries`, { event_type: 'email.sent,email.bounced' });

    expect(bounced.map((d) => d.id)).toEqual(everything.filter((d) => d.event === 'email.bounced').map((d) => d.id));
    expect(bounced).toHaveLength(1);
    expect(two.map((d) => d.id)).toEqual(
      everything.filter((d) => d.event === 'email.sent' || d.event === 'email.bounced').map((d) => d.id),
    );
  });

  it('keeps the deliveries in [since, until), on every page, with a status filter too', async () => {
    await setUp();
    const times = everything.map(timeOf).sort((a, b) => a - b);
    // A window that cuts the log: from the second delivery's time to the last one's (excluded).
    const since = new Date(times[1] ?? 0).toISOString();
    const until = new Date(times.at(-1) ?? 0).toISOString();
    const inWindow = everything.filter((d) => timeOf(d) >= Date.parse(since) && timeOf(d) < Date.parse(until));

    const paged = await all(key, `/webhooks/${hook}/deliveries`, { since, until, limit: '1' });
    const sinceOnly = await all(key, `/webhooks/${hook}/deliveries`, { since });
    const untilOnly = await all(key, `/webhooks/${hook}/deliveries`, { until, status: 'succeeded' });

    expect(inWindow.length).toBeGreaterThan(0);
    expect(inWindow.length).toBeLessThan(everything.length);
    expect(paged.map((d) => d.id)).toEqual(inWindow.map((d) => d.id));
    expect(sinceOnly.map((d) => d.id)).toEqual(
      everything.filter((d) => timeOf(d) >= Date.parse(since)).map((d) => d.id),
    );
    expect(untilOnly.map((d) => d.id)).toEqual(
      everything.filter((d) => timeOf(d) < Date.parse(until)).map((d) => d.id),
    );
  });

  it('refuses an unknown event type, a malformed time and a reversed window with 422 naming the field', async () => {
    await setUp();
    const unknown = await get<ErrorBody>(key, `/webhooks/${hook}/deliveries?event_type=email.sent,email.nope`);
    const malformed = await get<ErrorBody>(key, `/webhooks/${hook}/deliveries?since=yesterday`);
    const reversed = await get<ErrorBody>(
      key,
      `/webhooks/${hook}/deliveries?since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z`,
    );

    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toContain('event_type');
    expect(unknown.body.message).toContain('email.nope');
    expect(malformed.status).toBe(422);
    expect(malformed.body.message).toContain('since');
    expect(reversed.status).toBe(422);
    expect(reversed.body.details?.[0]?.path).toBe('until');
    expect(reversed.body.message).toMatch(/until.*after.*since/);
  });
});

describe('GET /v1/emails/:id/deliveries: event_type, since, until', () => {
  it("keeps the email's deliveries of those types and times, paged", async () => {
    await setUp();
    const emailId = emails[1] ?? '';
    const whole = await all(key, `/emails/${emailId}/deliveries`, {});
    const bounced = await all(key, `/emails/${emailId}/deliveries`, { event_type: 'email.bounced', limit: '1' });
    const first = whole.map(timeOf).sort((a, b) => a - b)[0] ?? 0;
    const later = await all(key, `/emails/${emailId}/deliveries`, { since: new Date(first + 1).toISOString() });
    const bad = await get<ErrorBody>(key, `/emails/${emailId}/deliveries?until=2026-13-01`);

    expect(whole.map((d) => d.event).sort()).toEqual(['email.bounced', 'email.sent']);
    expect(bounced.map((d) => d.event)).toEqual(['email.bounced']);
    expect(later.map((d) => d.id)).toEqual(whole.filter((d) => timeOf(d) > first).map((d) => d.id));
    expect(later.length).toBe(whole.length - 1);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('until');
  });
});

describe('GET /v1/emails: since, until', () => {
  it('keeps the emails created in [since, until), paged', async () => {
    await setUp();
    const listed = await all(key, '/emails', {});
    const created = listed.map((e) => Date.parse(e.created_at));
    const middle = listed.find((e) => e.id === emails[1]);
    const since = middle?.created_at ?? '';
    const until = listed.find((e) => e.id === emails[2])?.created_at ?? '';

    const window = await all(key, '/emails', { since, until, limit: '1' });
    const fromMiddle = await all(key, '/emails', { since, limit: '1' });
    const reversed = await get<ErrorBody>(key, `/emails?since=${until}&until=${since}`);

    expect(created).toHaveLength(3);
    expect(window.map((e) => e.id)).toEqual([emails[1]]);
    expect(fromMiddle.map((e) => e.id)).toEqual([emails[2], emails[1]]);
    expect(reversed.status).toBe(422);
    expect(reversed.body.details?.[0]?.path).toBe('until');
  });
});
