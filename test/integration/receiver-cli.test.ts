// `npm run receiver` (bin/receiver.ts) as docs/webhooks.md, "Try it with the local receiver" runs it: it answers
// 200 and prints each delivery with its two signature verdicts. Requests are signed here with node:crypto from the
// description in docs/webhooks.md, "Verify a delivery"; a last test has the local runtime deliver to it.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Spawned, spawnScript } from '../support/process';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

let receiver: Spawned;
let url: string;

beforeAll(async () => {
  receiver = spawnScript('bin/receiver.ts', ['--port', '0', '--secret', SECRET], {});
  url = (await receiver.waitFor(/on (http:\/\/\S+\/) /))[1] as string;
}, 30_000);

afterAll(async () => {
  if (receiver.child.exitCode === null) receiver.child.kill('SIGKILL');
});

/** Headers signed as Sendflow signs a `standard` delivery (docs/webhooks.md, "Verify a delivery"). */
function signed(
  secret: string,
  id: string,
  body: string,
  timestamp = String(Math.floor(Date.now() / 1000)),
): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': createHmac('sha256', secret).update(body).digest('hex'),
    'X-Service-Timestamp': timestamp,
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
  };
}

/** The block the receiver printed for the delivery with this webhook-id. */
async function printedFor(id: string): Promise<string> {
  const [block] = await receiver.waitFor(new RegExp(`.*webhook-id: ${id}\\n.*\\n.*`));
  return block;
}

describe('npm run receiver', () => {
  it('prints a correctly signed delivery with both signatures valid, and answers 200', async () => {
    const body = JSON.stringify({ id: 'evt_good', type: 'email.sent', data: { to: 'a@example.com' } });
    const res = await fetch(`${url}hooks`, { method: 'POST', body, headers: signed(SECRET, 'evt_good', body) });
    expect(res.status).toBe(200);
    const block = await printedFor('evt_good');
    expect(block).toMatch(/POST \/hooks email\.sent webhook-id: evt_good/);
    expect(block).toMatch(/X-Service-Signature: valid {3}webhook-signature: valid/);
    expect(block).toContain('"type":"email.sent"');
  });

  it('says INVALID for each signature that does not verify, checked independently', async () => {
    const body = JSON.stringify({ id: 'evt_bad', type: 'email.bounced' });
    const wrong = `whsec_${Buffer.from('another secret, another key....').toString('base64')}`;
    const headers = {
      ...signed(wrong, 'evt_bad', body),
      'X-Service-Signature': signed(SECRET, 'x', body)['X-Service-Signature'],
    };
    const res = await fetch(`${url}hooks`, { method: 'POST', body, headers: headers as Record<string, string> });
    expect(res.status).toBe(200);
    expect(await printedFor('evt_bad')).toMatch(/X-Service-Signature: valid {3}webhook-signature: INVALID/);

    const tampered = await fetch(`${url}hooks`, {
      method: 'POST',
      body: body.replace('bounced', 'delivered'),
      headers: signed(SECRET, 'evt_tampered', body),
    });
    expect(tampered.status).toBe(200);
    expect(await printedFor('evt_tampered')).toMatch(/X-Service-Signature: INVALID {3}webhook-signature: INVALID/);
  });

  it('explains an X-Service-Signature made with the previous secret during a rotation grace', async () => {
    const body = JSON.stringify({ id: 'evt_grace', type: 'email.sent' });
    const previous = `whsec_${Buffer.from('the secret before the rotation.').toString('base64')}`;
    const withNew = signed(SECRET, 'evt_grace', body);
    const withPrevious = signed(previous, 'evt_grace', body, withNew['webhook-timestamp']);
    const headers = {
      ...withNew,
      'X-Service-Signature': withPrevious['X-Service-Signature'],
      'webhook-signature': `${withNew['webhook-signature']} ${withPrevious['webhook-signature']}`,
    } as Record<string, string>;
    expect((await fetch(`${url}hooks`, { method: 'POST', body, headers })).status).toBe(200);
    expect(await printedFor('evt_grace')).toMatch(
      /X-Service-Signature: INVALID {3}webhook-signature: valid \(expected during a secret rotation: X-Service-Signature keeps the previous secret until the grace period ends\)/,
    );
  });

  it('says missing when a request carries no signatures', async () => {
    const res = await fetch(`${url}x`, { method: 'POST', body: '{}', headers: { 'webhook-id': 'evt_unsigned' } });
    expect(res.status).toBe(200);
    expect(await printedFor('evt_unsigned')).toMatch(/X-Service-Signature: missing {3}webhook-signature: missing/);
  });

  describe('with the local runtime delivering to it', () => {
    let rt: TestRuntime;
    beforeAll(async () => {
      rt = await startTestRuntime();
    });
    afterAll(async () => {
      await rt.stop();
    });

    it('verifies a real test send with the webhook secret given in SF_WEBHOOK_SECRET', async () => {
      // Arrange: the webhook first (its secret is needed), then a receiver started with that secret.
      const { key } = await rt.newKey();
      const other = spawnScript('bin/receiver.ts', ['--port', '0'], { SF_WEBHOOK_SECRET: 'placeholder' });
      expect(await other.exited()).toBe(2);
      expect(other.output()).toMatch(/receiver: the secret is the webhook's signing_secret, which starts with whsec_/);

      const port = new URL(url).port;
      const created = await rt.call('/webhooks', {
        method: 'POST',
        key,
        body: JSON.stringify({ url: `http://127.0.0.1:${port}/hooks`, events: ['email.sent'] }),
      });
      const hook = (await created.json()) as { id: string; signing_secret: string };
      const own = spawnScript('bin/receiver.ts', ['--port', '0'], { SF_WEBHOOK_SECRET: hook.signing_secret });
      try {
        const ownUrl = (await own.waitFor(/on (http:\/\/\S+\/) /))[1] as string;
        await rt.call(`/webhooks/${hook.id}`, {
          method: 'PUT',
          key,
          body: JSON.stringify({ url: `${ownUrl}hooks` }),
        });

        // Act
        const res = await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key });

        // Assert
        expect(await res.json()).toMatchObject({ success: true, status: 200 });
        const [block] = await own.waitFor(/POST \/hooks test webhook-id: evt_\w+\n.*\n.*/);
        expect(block).toMatch(/X-Service-Signature: valid {3}webhook-signature: valid/);
      } finally {
        own.child.kill('SIGTERM');
        await own.exited();
      }
    });
  });
});
