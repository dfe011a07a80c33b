// Issue 27's reproduction over real HTTP: an email's first event (email.sent, told by the send worker where it
// arises) must hold its later ones on a `per_email` webhook, with the simulator at its default pace (a step a
// second) and an unordered webhook on the same receiver beside it. The receiver answers 500 to the email's
// email.sent for its first 3 s; on the ordered webhook nothing of that email may be attempted before its
// email.sent succeeded, while the unordered one gets them at once (the control, in the same run).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Received, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

interface Payload {
  type: string;
  email_id: string;
  sequence: number;
}

// Step 0: the simulator tells delivered and opened at once, before the send worker has processed email.sent;
// step 1: as the issue measured it (the runtime's default pace).
describe.each(['0', '1'])('per_email ordering with the simulator stepping %s s', (step) => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({ SF_RETRY_DELAYS: '1,1,1,1', SF_SIMULATOR_STEP_SECONDS: step });
  });
  afterAll(() => rt.stop());

  it("delivers an email's email.delivered and email.opened only after its email.sent succeeded", async () => {
    // Arrange: one receiver, two webhooks on it (its path tells them apart).
    const rx = await startReceiver();
    try {
      const { key } = await rt.newKey();
      const events = ['email.sent', 'email.delivered', 'email.opened'];
      for (const [path, ordering] of [
        ['ordered', 'per_email'],
        ['plain', 'none'],
      ] as const) {
        const res = await rt.call('/webhooks', {
          method: 'POST',
          key,
          body: JSON.stringify({ url: `${rx.url}/${path}`, events, ordering }),
        });
        expect(res.status).toBe(201);
      }
      let firstSentAt: number | null = null;
      rx.answer((n) => {
        const request = rx.received[n - 1] as Received;
        if ((JSON.parse(request.body) as Payload).type !== 'email.sent') return { kind: 'status', status: 200 };
        firstSentAt ??= request.at;
        return { kind: 'status', status: request.at - firstSentAt < 3_000 ? 500 : 200 };
      });

      // Act
      const res = await rt.call('/emails', {
        method: 'POST',
        key,
        body: JSON.stringify({ from: 'a@acme.test', to: 'open+x@simulator.amazonses.com', subject: 'X', text: 'x' }),
      });
      expect(res.status).toBe(200);
      const deadline = Date.now() + 20_000;
      const okOn = (path: string) =>
        rx.received.filter((r) => r.path === `/${path}` && !isFailedSent(r, firstSentAt)).length;
      while ((okOn('ordered') < 3 || okOn('plain') < 3) && Date.now() < deadline) await sleep(50);

      // Assert: on the ordered webhook, email.sent failed, then succeeded; nothing else came before that.
      const ordered = rx.received.filter((r) => r.path === '/ordered');
      const types = ordered.map((r) => (JSON.parse(r.body) as Payload).type);
      const sentOk = ordered.findIndex((r, n) => types[n] === 'email.sent' && !isFailedSent(r, firstSentAt));
      expect(sentOk).toBeGreaterThan(0);
      expect(types.slice(0, sentOk).every((type) => type === 'email.sent')).toBe(true);
      expect(types.slice(sentOk + 1)).toEqual(['email.delivered', 'email.opened']);
      const sentOkAt = (ordered[sentOk] as Received).at;
      expect(sentOkAt - (firstSentAt as unknown as number)).toBeGreaterThanOrEqual(3_000);
      // The control: the unordered webhook got email.delivered while email.sent was still failing.
      const plainDelivered = rx.received.find(
        (r) => r.path === '/plain' && (JSON.parse(r.body) as Payload).type === 'email.delivered',
      );
      expect(plainDelivered?.at).toBeLessThan(sentOkAt);
    } finally {
      await rx.close();
    }
  }, 40_000);
});

/** An email.sent answered 500: within 3 s of the first one. */
function isFailedSent(r: Received, firstSentAt: number | null): boolean {
  return (JSON.parse(r.body) as Payload).type === 'email.sent' && firstSentAt !== null && r.at - firstSentAt < 3_000;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
