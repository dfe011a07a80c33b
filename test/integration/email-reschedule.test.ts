// PATCH /v1/emails/:id over real HTTP (Resend's emails.update): a scheduled email's send time moves, GET shows
// it, the old time sends nothing and the new one sends; 409 once sent or cancelled; the send rules for the time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(() => rt.stop());

interface EmailView {
  id: string;
  status: string;
  scheduled_at: string | null;
  events: { type: string }[];
}

const at = (ms: number) => new Date(Date.now() + ms).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function schedule(key: string, from: string, scheduledAt: string): Promise<string> {
  const res = await rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({
      from,
      to: 'success@simulator.amazonses.com',
      subject: 'Later',
      text: 'x',
      scheduled_at: scheduledAt,
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}
const patch = (key: string, id: string, body: unknown) =>
  rt.call(`/emails/${id}`, { method: 'PATCH', key, body: JSON.stringify(body) });
const read = async (key: string, id: string) => (await (await rt.call(`/emails/${id}`, { key })).json()) as EmailView;

async function liveKey(): Promise<string> {
  const { key } = await rt.newKey({ mode: 'live' });
  const domain = (await (
    await rt.call('/domains', { method: 'POST', key, body: JSON.stringify({ name: 'later.example.com' }) })
  ).json()) as { id: string };
  await rt.call(`/domains/${domain.id}/verify`, { method: 'POST', key });
  return key;
}

describe('PATCH /v1/emails/:id', () => {
  it.each(['test', 'live'] as const)(
    '%s mode: moves the send later; the old time sends nothing, the new one sends; then 409',
    async (mode) => {
      const key = mode === 'live' ? await liveKey() : (await rt.newKey()).key;
      const id = await schedule(key, 'a@later.example.com', at(1_500));
      const later = new Date(Date.now() + 3_500).toISOString();

      const res = await patch(key, id, { scheduled_at: later });
      expect(res.status).toBe(200);
      // The whole email, as GET shows it (its body and each recipient's headers too, not the metadata alone).
      const moved = (await res.json()) as Record<string, unknown>;
      expect(moved).toMatchObject({ object: 'email', id, status: 'scheduled', scheduled_at: later, text: 'x' });
      expect(Object.keys(moved.recipient_headers as object)).toEqual(['success@simulator.amazonses.com']);
      expect(await read(key, id)).toMatchObject({ status: 'scheduled', scheduled_at: later });

      await sleep(2_300); // past the old time
      await rt.settle();
      const between = await read(key, id);
      expect(between.status).toBe('scheduled');
      expect(between.events.map((e) => e.type)).toEqual(['email.scheduled']);

      await sleep(Math.max(0, Date.parse(later) - Date.now()) + 500);
      await rt.settle();
      const sent = await read(key, id);
      expect(sent.status).not.toBe('scheduled');
      expect(sent.events.map((e) => e.type)).toContain('email.sent');
      expect(sent.events.filter((e) => e.type === 'email.scheduled')).toHaveLength(1);

      const late = await patch(key, id, { scheduled_at: at(60_000) });
      expect(late.status).toBe(409);
      expect(await late.json()).toMatchObject({
        code: 'not_reschedulable',
        name: 'not_reschedulable',
        statusCode: 409,
      });
    },
    20_000,
  );

  it('moves the send earlier: sent at the new time', async () => {
    const { key } = await rt.newKey();
    const id = await schedule(key, 'a@example.com', at(3_600_000));
    expect((await patch(key, id, { scheduled_at: at(800) })).status).toBe(200);
    await sleep(1_300);
    await rt.settle();
    expect((await read(key, id)).events.map((e) => e.type)).toContain('email.sent');
  });

  it('409 for a cancelled email and one sent now; 404 for another account; the send rules for the time (422)', async () => {
    const { key } = await rt.newKey();
    const other = (await rt.newKey()).key;
    const canceled = await schedule(key, 'a@example.com', at(3_600_000));
    expect((await rt.call(`/emails/${canceled}/cancel`, { method: 'POST', key })).status).toBe(200);
    expect((await patch(key, canceled, { scheduled_at: at(7_200_000) })).status).toBe(409);
    expect((await read(key, canceled)).status).toBe('canceled');

    const nowRes = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'a@example.com', to: 'b@example.com', subject: 'Now', text: 'x' }),
    });
    const now = ((await nowRes.json()) as { id: string }).id;
    expect((await patch(key, now, { scheduled_at: at(7_200_000) })).status).toBe(409);

    const waiting = await schedule(key, 'a@example.com', at(3_600_000));
    expect((await patch(other, waiting, { scheduled_at: at(7_200_000) })).status).toBe(404);
    for (const [body, message] of [
      [{ scheduled_at: '2020-01-01T09:00:00Z' }, /^`scheduled_at` must be in the future/],
      [{ scheduled_at: at(31 * 86_400_000) }, /^`scheduled_at` must be at most 30 days from now/],
      [{ scheduled_at: 'tomorrow' }, /^`scheduled_at` is not a time Sendflow can read: "tomorrow"\. Give .*ISO 8601/],
      [{ scheduled_at: 'in 40 days' }, /^`scheduled_at` must be at most 30 days from now/],
      [{}, /^`scheduled_at` is required: .*ISO 8601/],
      [{ scheduled_at: at(7_200_000), subject: 'x' }, /subject/],
    ] as const) {
      const res = await patch(key, waiting, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const error = (await res.json()) as { details: { message: string }[] };
      expect(error.details.map((d) => d.message).join(' ')).toMatch(message);
    }
    expect((await read(key, waiting)).status).toBe('scheduled');
  });
});
