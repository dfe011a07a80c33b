// One-click unsubscribe (RFC 8058) over real HTTP: the headers every email carries, the public POST that
// suppresses and fires email.unsubscribed, the GET page that never unsubscribes, and forged links.
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDynamoClient } from '../../lambdas/runtime/local/dynamo';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let receiver: Receiver;
let doc: DynamoDBDocumentClient;
beforeAll(async () => {
  rt = await startTestRuntime();
  receiver = await startReceiver();
  doc = DynamoDBDocumentClient.from(localDynamoClient(rt.dynamoEndpoint));
});
afterAll(async () => {
  doc.destroy();
  await receiver.close();
  await rt.stop();
});

const settle = async () => {
  await rt.settle();
};

async function sentEmail(path: string, to = 'reader@example.com') {
  const { key } = await rt.newKey();
  await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({
      url: `${receiver.url}${path}`,
      events: ['email.unsubscribed', 'email.suppressed', 'email.delivered'],
    }),
  });
  const res = await rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'News <news@acme.test>', to, subject: 'Issue 1', html: '<p>x</p>' }),
  });
  const { id } = (await res.json()) as { id: string };
  await settle();
  const email = (await (await rt.call(`/emails/${id}`, { key })).json()) as {
    recipient_headers: Record<string, Record<string, string>>;
    status: string;
  };
  const header = email.recipient_headers[to]?.['List-Unsubscribe'] ?? '';
  return { key, id, email, url: header.slice(1, -1) };
}

const form = (url: string, body = 'List-Unsubscribe=One-Click') =>
  fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });
const events = (path: string) =>
  receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body) as Record<string, unknown>);

describe('List-Unsubscribe headers', () => {
  it('every recipient copy carries its own signed link and List-Unsubscribe-Post', async () => {
    const { email, url } = await sentEmail('/h1');
    expect(email.recipient_headers['reader@example.com']).toEqual({
      'List-Unsubscribe': `<${url}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(url.startsWith(`${rt.url}/unsubscribe/`)).toBe(true);
    expect(url.split('/').pop()).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });
});

describe('POST /v1/unsubscribe/:token', () => {
  it('suppresses the recipient, fires email.unsubscribed once, and the email keeps its status', async () => {
    const { key, id, url } = await sentEmail('/u1');
    const res = await form(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect((await form(url)).status).toBe(200);
    await settle();
    const unsubscribed = events('/u1').filter((e) => e.type === 'email.unsubscribed');
    expect(unsubscribed).toEqual([
      expect.objectContaining({
        email_id: id,
        to: 'reader@example.com',
        data: {
          from: 'News <news@acme.test>',
          subject: 'Issue 1',
          source: 'list-unsubscribe',
          // Resend's fields of an email event.
          email_id: id,
          created_at: expect.any(String),
          to: ['reader@example.com'],
        },
      }),
    ]);
    expect(((await (await rt.call(`/emails/${id}`, { key })).json()) as { status: string }).status).toBe('delivered');

    await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'news@acme.test', to: 'reader@example.com', subject: 'Issue 2', text: 'x' }),
    });
    await settle();
    expect(events('/u1').filter((e) => e.type === 'email.suppressed')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ reason: 'unsubscribe' }) }),
    ]);
  });

  it('accepts the multipart/form-data body too', async () => {
    const { url } = await sentEmail('/u2');
    const body = new FormData();
    body.set('List-Unsubscribe', 'One-Click');
    expect((await fetch(url, { method: 'POST', body })).status).toBe(200);
    await settle();
    expect(events('/u2').some((e) => e.type === 'email.unsubscribed')).toBe(true);
  });

  it('for an email sent more than 30 days ago: suppressed, but no webhook', async () => {
    const { key, id, url } = await sentEmail('/u3');
    await doc.send(
      new UpdateCommand({
        TableName: 'sendflow-emails',
        Key: { id },
        UpdateExpression: 'SET createdAt = :old, sentAt = :old',
        ExpressionAttributeValues: { ':old': new Date(Date.now() - 31 * 86_400_000).toISOString() },
      }),
    );
    expect((await form(url)).status).toBe(200);
    await settle();
    expect(events('/u3').some((e) => e.type === 'email.unsubscribed')).toBe(false);
    await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'news@acme.test', to: 'reader@example.com', subject: 'again', text: 'x' }),
    });
    await settle();
    expect(events('/u3').some((e) => e.type === 'email.suppressed')).toBe(true);
  });

  it('refuses a body without List-Unsubscribe=One-Click (422) and changes nothing', async () => {
    const { url } = await sentEmail('/u4');
    expect((await form(url, 'hello=world')).status).toBe(422);
    expect((await fetch(url, { method: 'POST' })).status).toBe(422);
    await settle();
    expect(events('/u4').some((e) => e.type === 'email.unsubscribed')).toBe(false);
  });

  it('answers forged, altered and malformed links with a 404 that reveals nothing', async () => {
    const { url } = await sentEmail('/u5');
    const [payload = '', signature = ''] = (url.split('/').pop() ?? '').split('.');
    const forgedPayload = Buffer.from(
      JSON.stringify({ a: 'acct_x', m: 'test', e: 'email_x', r: 'victim@example.com' }),
    ).toString('base64url');
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    for (const token of [`${forgedPayload}.${signature}`, `${payload}.${flipped}`, 'nonsense', `${payload}`]) {
      const res = await form(`${rt.url}/unsubscribe/${token}`);
      expect(await res.json(), token).toEqual({
        error: 'Not found.',
        status: 404,
        code: 'not_found',
        name: 'not_found',
        message: 'Not found.',
        statusCode: 404,
      });
    }
    for (const token of [`${forgedPayload}.${signature}`, '%ZZ']) {
      const res = await form(`${rt.url}/unsubscribe/${token}`);
      expect(res.status, token).toBe(404);
      expect(await res.json()).toMatchObject({ status: 404, code: 'not_found' });
    }
  });
});

describe('GET /v1/unsubscribe/:token', () => {
  it('shows a confirmation page with a one-click form, and never unsubscribes', async () => {
    const { key, url } = await sentEmail('/g1');
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('method="post"');
    expect(html).toContain('name="List-Unsubscribe" value="One-Click"');
    expect(html).toContain('reader@example.com');
    expect(html).toContain('News &lt;news@acme.test&gt;');
    await fetch(url);
    await rt.call('/emails', {
      method: 'POST',
      key,
      body: JSON.stringify({ from: 'news@acme.test', to: 'reader@example.com', subject: 'again', text: 'x' }),
    });
    await settle();
    expect(events('/g1').some((e) => e.type === 'email.suppressed' || e.type === 'email.unsubscribed')).toBe(false);
    expect((await fetch(`${rt.url}/unsubscribe/bogus.token`)).status).toBe(404);
  });
});
