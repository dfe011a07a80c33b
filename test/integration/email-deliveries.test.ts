// GET /v1/emails/:id/deliveries over real HTTP: the deliveries of an email's events to every webhook of the
// caller's account and mode, exactly those each webhook's own delivery log holds for that email, newest first;
// 404 for another tenant's email and an unknown or malformed id (as GET /v1/emails/:id), 403 without webhook:read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountKey } from '../../lambdas/app/accounts';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
beforeAll(async () => {
  // Simulated events 50 ms apart: their ids (and so their deliveries' ids) follow the story's order.
  rt = await startTestRuntime({ SF_SIMULATOR_STEP_SECONDS: '0.05' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

interface DeliveryView {
  readonly id: string;
  readonly webhook_id: string;
  readonly event: string;
  readonly status: string;
  readonly object: string;
}
interface ListBody {
  readonly object: string;
  readonly has_more: boolean;
  readonly next_after: string | null;
  readonly data: DeliveryView[];
}

const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;
const post = (key: string, path: string, body: unknown) =>
  rt.call(path, { method: 'POST', key, body: JSON.stringify(body) });

async function webhook(key: string, events: string[]): Promise<string> {
  const res = await post(key, '/webhooks', { url: `${receiver.url}/email-deliveries`, events });
  expect(res.status).toBe(201);
  return (await json<{ id: string }>(res)).id;
}

async function send(key: string, to: string): Promise<string> {
  const res = await post(key, '/emails', { from: 'Acme <hi@acme.test>', to, subject: 'Hello', html: '<p>x</p>' });
  expect(res.status).toBe(200);
  return (await json<{ id: string }>(res)).id;
}

/** A webhook's whole delivery log (one page is plenty here). */
async function log(key: string, hookId: string): Promise<DeliveryView[]> {
  const res = await rt.call(`/webhooks/${hookId}/deliveries?limit=100`, { key });
  expect(res.status).toBe(200);
  return (await json<ListBody>(res)).data;
}

/** The email a delivery is of, from its payload (the standard envelope names it): independent of id derivation. */
async function emailOf(key: string, hookId: string, deliveryId: string): Promise<string | undefined> {
  const res = await rt.call(`/webhooks/${hookId}/deliveries/${deliveryId}`, { key });
  expect(res.status).toBe(200);
  const { payload } = await json<{ payload: string }>(res);
  return (JSON.parse(payload) as { email_id?: string }).email_id;
}

describe('GET /v1/emails/:id/deliveries', () => {
  it("lists exactly the deliveries of the email's events to each of the tenant's webhooks, newest first", async () => {
    // Arrange: one webhook for the outcome events, one for others; two emails, so the log holds more than ours.
    const { key } = await rt.newKey();
    const outcomes = await webhook(key, ['email.delivered', 'email.bounced', 'email.complained']);
    const others = await webhook(key, ['email.sent', 'email.scheduled', 'email.opened']);
    const emailId = await send(key, 'bounce@simulator.amazonses.com');
    const otherEmail = await send(key, 'success@simulator.amazonses.com');
    await rt.settle();

    // The expected set, from each webhook's own log: its deliveries whose event is of the email.
    const expected: DeliveryView[] = [];
    for (const hookId of [outcomes, others]) {
      for (const delivery of await log(key, hookId)) {
        if ((await emailOf(key, hookId, delivery.id)) === emailId) expected.push(delivery);
      }
    }
    expect(new Set(expected.map((d) => d.webhook_id))).toEqual(new Set([outcomes, others]));
    expect(expected.map((d) => d.event).sort()).toEqual(['email.bounced', 'email.sent']);

    // Act
    const res = await rt.call(`/emails/${emailId}/deliveries`, { key });

    // Assert
    expect(res.status).toBe(200);
    const body = await json<ListBody>(res);
    expect(body.object).toBe('list');
    expect(body.has_more).toBe(false);
    expect(body.next_after).toBeNull();
    expect(body.data.map((d) => d.id).sort()).toEqual(expected.map((d) => d.id).sort());
    // The same view as the delivery log's.
    for (const delivery of body.data) {
      expect(delivery).toEqual(expected.find((d) => d.id === delivery.id));
      expect(delivery.object).toBe('webhook_delivery');
    }
    // Newest first: delivery ids start with the event's time-ordered id (bounced came 50 ms after sent).
    const ids = body.data.map((d) => d.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(body.data.map((d) => d.event)).toEqual(['email.bounced', 'email.sent']);
    // The other email's deliveries are not this one's.
    const theirs = await json<ListBody>(await rt.call(`/emails/${otherEmail}/deliveries`, { key }));
    expect(theirs.data.length).toBeGreaterThan(0);
    expect(theirs.data.some((d) => ids.includes(d.id))).toBe(false);
    // A deleted webhook's deliveries can no longer be derived (docs/webhooks.md, "An email's deliveries").
    expect((await rt.call(`/webhooks/${others}`, { method: 'DELETE', key })).status).toBeLessThan(300);
    const afterDelete = await json<ListBody>(await rt.call(`/emails/${emailId}/deliveries`, { key }));
    expect(afterDelete.data.map((d) => d.webhook_id)).toEqual([outcomes]);
  });

  it("answers 404 for another tenant's email, as GET /v1/emails/:id does, and never shows its deliveries", async () => {
    // Arrange
    const owner = await rt.newKey();
    await webhook(owner.key, ['email.sent']);
    const emailId = await send(owner.key, 'success@simulator.amazonses.com');
    await rt.settle();
    const stranger = await rt.newKey();
    await webhook(stranger.key, ['email.sent']);
    // The same account in the other mode is another tenant too.
    const { secret: ownerLive } = await createAccountKey(rt.admin, { accountId: owner.accountId, mode: 'live' });

    // Act
    const responses = await Promise.all(
      [stranger.key, ownerLive].flatMap((key) => [
        rt.call(`/emails/${emailId}/deliveries`, { key }),
        rt.call(`/emails/${emailId}`, { key }),
      ]),
    );

    // Assert
    const bodies = await Promise.all(responses.map((r) => r.json()));
    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404]);
    expect(bodies[0]).toEqual(bodies[1]);
    expect(JSON.stringify(bodies)).not.toContain('dlv_');
    const own = await json<ListBody>(await rt.call(`/emails/${emailId}/deliveries`, { key: owner.key }));
    expect(own.data.length).toBe(1);
  });

  it('answers 404 for an unknown and a malformed id, with the error GET /v1/emails/:id gives', async () => {
    const { key } = await rt.newKey();
    for (const id of ['email_01jzzzzzzzzzzzzzzzzzzzzzzz', 'not-an-id', '%20']) {
      const [list, get] = await Promise.all([
        rt.call(`/emails/${id}/deliveries`, { key }),
        rt.call(`/emails/${id}`, { key }),
      ]);
      expect(list.status).toBe(get.status);
      expect(list.status).toBe(404);
      expect(await list.json()).toEqual(await get.json());
    }
  });

  it('needs webhook:read: an email:read-only key gets 403; a webhook:read-only key gets the list', async () => {
    // Arrange
    const full = await rt.newKey();
    const emailId = await send(full.key, 'success@simulator.amazonses.com');
    const emailRead = await post(full.key, '/api-keys', { name: 'reader', scopes: ['email:read'] });
    const webhookRead = await post(full.key, '/api-keys', { name: 'hooks', scopes: ['webhook:read'] });
    const { key: emailOnly } = await json<{ key: string }>(emailRead);
    const { key: hooksOnly } = await json<{ key: string }>(webhookRead);

    // Act
    const denied = await rt.call(`/emails/${emailId}/deliveries`, { key: emailOnly });
    const allowed = await rt.call(`/emails/${emailId}/deliveries`, { key: hooksOnly });

    // Assert
    expect(denied.status).toBe(403);
    expect(JSON.stringify(await denied.json())).toContain('webhook:read');
    expect(allowed.status).toBe(200);
    expect(await allowed.json()).toEqual({ object: 'list', has_more: false, next_after: null, data: [] });
  });

  it('pages with limit and after (a delivery id): newest first, has_more and next_after, every delivery once', async () => {
    // Arrange: three webhooks for the events of a delivered email (sent, delivered): six deliveries.
    const { key } = await rt.newKey();
    for (let i = 0; i < 3; i++) await webhook(key, ['email.sent', 'email.delivered']);
    const emailId = await send(key, 'success@simulator.amazonses.com');
    await rt.settle();
    const whole = await json<ListBody>(await rt.call(`/emails/${emailId}/deliveries?limit=100`, { key }));
    expect(whole.data).toHaveLength(6);
    expect(whole).toMatchObject({ has_more: false, next_after: null });

    // Act
    const pages: ListBody[] = [];
    let after = '';
    for (let n = 0; n < 5; n++) {
      const res = await rt.call(`/emails/${emailId}/deliveries?limit=4${after ? `&after=${after}` : ''}`, { key });
      expect(res.status).toBe(200);
      const page = await json<ListBody>(res);
      pages.push(page);
      if (!page.has_more) break;
      after = page.next_after ?? '';
    }

    // Assert
    expect(pages.map((p) => p.data.length)).toEqual([4, 2]);
    expect(pages.map((p) => p.has_more)).toEqual([true, false]);
    expect(pages[0]?.next_after).toBe(pages[0]?.data.at(-1)?.id);
    expect(pages[1]?.next_after).toBeNull();
    expect(pages.flatMap((p) => p.data)).toEqual(whole.data);
  });

  it('refuses a limit out of 1–100, an after that is no delivery id, and unknown parameters with 422', async () => {
    const { key } = await rt.newKey();
    const emailId = await send(key, 'success@simulator.amazonses.com');
    for (const query of ['limit=0', 'limit=101', 'after=email_x', 'status=failed', 'page=2']) {
      const res = await rt.call(`/emails/${emailId}/deliveries?${query}`, { key });
      expect(res.status, query).toBe(422);
    }
    expect((await rt.call(`/emails/${emailId}/deliveries?limit=1`, { key })).status).toBe(200);
  });
});
