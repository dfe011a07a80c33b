// An email's event history over real HTTP, on the local runtime: a large email with a thousand events keeps
// dispatching to its webhooks (its history no longer lives in the email item, which would pass DynamoDB's
// 400 KB), and GET /v1/emails/:id shows the newest events, the status, and whether older ones were left out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SendflowEvent } from '../../lambdas/domain/events';
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

interface EmailView {
  status: string;
  events: { id: string; type: string; to: string | null; timestamp: string }[];
  events_truncated: boolean;
}

describe('an email with a thousand events', () => {
  it('keeps dispatching its events to webhooks, and GET shows the newest 100 with the status', async () => {
    // Arrange: a webhook for deliveries, and a large email (250 KB of html, near the stored-size cap), sent and
    // delivered.
    const { key, accountId } = await rt.newKey();
    const hook = await rt.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}/history`, events: ['email.delivered'] }),
    });
    expect(hook.status).toBe(201);
    const sent = await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({
        from: 'Acme <hi@acme.test>',
        to: 'success@simulator.amazonses.com',
        subject: 'Big',
        html: `<p>${'y'.repeat(250 * 1024)}</p>`,
      }),
    });
    expect(sent.status).toBe(200);
    const { id: emailId } = (await sent.json()) as { id: string };
    await rt.settle();
    expect(receiver.received).toHaveLength(1);

    // Act: a thousand opens (no webhook wants them), then one more delivery the webhook does want.
    const base = Date.now();
    const event = (i: number, type: SendflowEvent['type']): SendflowEvent => ({
      id: `evt_history_${String(i).padStart(4, '0')}_${emailId}`,
      type,
      accountId,
      mode: 'test',
      emailId,
      to: 'success@simulator.amazonses.com',
      timestamp: new Date(base + i).toISOString(),
      data: { from: 'Acme <hi@acme.test>', subject: 'Big' },
    });
    for (let i = 0; i < 1000; i += 100) {
      await rt.services.events.publish(Array.from({ length: 100 }, (_, j) => event(i + j, 'email.opened')));
    }
    await rt.services.events.publish([event(1000, 'email.delivered')]);

    // Assert: the last delivery reached the webhook (before, it was stuck behind a history write that failed).
    const [, last] = await receiver.waitFor(2, 20_000);
    expect(JSON.parse(last?.body ?? '{}')).toMatchObject({ id: event(1000, 'email.delivered').id });

    const res = await rt.call(`/emails/${emailId}`, { key });
    expect(res.status).toBe(200);
    const view = (await res.json()) as EmailView;
    expect(view.status).toBe('delivered');
    expect(view.events_truncated).toBe(true);
    expect(view.events).toHaveLength(100);
    // The newest 100 by time, oldest of them first.
    expect(view.events.map((e) => e.id)).toEqual(
      Array.from({ length: 100 }, (_, i) => event(901 + i, i === 99 ? 'email.delivered' : 'email.opened').id),
    );
  }, 120_000);
});
