// The attempt failure taxonomy and phase timings over real loopback HTTP (issue 10, item 3): each attempt_log
// entry of a delivery carries error_class and timings as the sender measured them against a real receiver
// (refused port, 500, slow, redirect, https with a self-signed certificate), and the delivery list filters by the
// latest attempt's class, refusing an unknown class with 422. Attempts are test sends: synchronous and recorded.
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

interface AttemptView {
  status_code: number;
  error: string;
  error_class: string | null;
  timings: { dns_ms: number | null; connect_ms: number | null; tls_ms: number | null; ttfb_ms: number | null };
  request_headers?: Record<string, string> | null;
  response_headers?: Record<string, string> | null;
}
interface DeliveryView {
  id: string;
  status: string;
  attempt_log: AttemptView[];
}

const TIMEOUT_MS = 1_000;
let rt: TestRuntime;
let receiver: Receiver;
let key: string;
beforeAll(async () => {
  rt = await startTestRuntime({ SF_ATTEMPT_TIMEOUT_MS: String(TIMEOUT_MS) });
  receiver = await startReceiver();
  ({ key } = await rt.newKey());
});
afterAll(async () => {
  await receiver.close();
  await rt.stop();
});

async function newWebhook(url: string): Promise<string> {
  const res = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url, events: ['email.sent'] }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** A test send to the webhook, then its delivery as GET …/deliveries/:id shows it. */
async function testSend(hookId: string): Promise<DeliveryView> {
  const sent = await rt.call(`/webhooks/${hookId}/test`, { method: 'POST', key });
  expect(sent.status).toBe(200);
  const { delivery } = (await sent.json()) as { delivery: { id: string } };
  const res = await rt.call(`/webhooks/${hookId}/deliveries/${delivery.id}`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as DeliveryView;
}

/** A port nothing listens on (bound, then closed). */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('attempt_log error_class and timings', () => {
  it('a refused port: connection_refused, no connect time, no ttfb', async () => {
    // Arrange
    const hookId = await newWebhook(`http://127.0.0.1:${await freePort()}/hook`);

    // Act
    const delivery = await testSend(hookId);

    // Assert
    expect(delivery.attempt_log).toEqual([
      {
        at: expect.any(String),
        status_code: 0,
        duration_ms: expect.any(Number),
        error: 'connection refused',
        error_class: 'connection_refused',
        kind: 'test',
        // What was sent (signed); no answer, so no answer headers.
        request_headers: expect.objectContaining({ 'webhook-signature': expect.stringMatching(/^v1,/) }),
        response_headers: null,
        retry_after_seconds: null,
        // AWS destinations only.
        aws_error_code: null,
        aws_request_id: null,
        timings: { dns_ms: null, connect_ms: null, tls_ms: null, ttfb_ms: null },
      },
    ]);
  });

  it('a receiver answering 500: http_5xx; no DNS for 127.0.0.1, no TLS on http, a connect time and a ttfb', async () => {
    // Arrange
    receiver.answer({ kind: 'status', status: 500, body: 'boom' });
    const hookId = await newWebhook(`${receiver.url}/fivehundred`);

    // Act
    const [attempt] = (await testSend(hookId)).attempt_log;

    // Assert
    expect(attempt).toMatchObject({ status_code: 500, error: 'HTTP 500', error_class: 'http_5xx' });
    const timings = attempt?.timings;
    expect(timings?.dns_ms).toBeNull();
    expect(timings?.tls_ms).toBeNull();
    // A kept-alive socket from an earlier attempt has no connect phase: either is right here.
    expect(timings?.connect_ms === null || typeof timings?.connect_ms === 'number').toBe(true);
    expect(timings?.ttfb_ms).toEqual(expect.any(Number));
  });

  it('keeps the headers of a failed attempt (what was sent, what came back), never of a success (row size)', async () => {
    // Arrange
    const hookId = await newWebhook(`${receiver.url}/headers`);
    receiver.answer({ kind: 'status', status: 500, body: 'boom' });
    const [failed] = (await testSend(hookId)).attempt_log;
    receiver.answer({ kind: 'status', status: 200, body: 'ok' });

    // Act
    const [succeeded] = (await testSend(hookId)).attempt_log;

    // Assert
    expect(failed?.request_headers).toEqual(expect.objectContaining({ 'webhook-id': expect.any(String) }));
    expect(failed?.response_headers).toEqual(expect.objectContaining({ 'content-type': 'text/plain' }));
    expect(succeeded).toMatchObject({ status_code: 200, request_headers: null, response_headers: null });
  });

  it('a slow receiver: timeout after the attempt deadline, no ttfb', async () => {
    // Arrange
    receiver.answer({ kind: 'slow', delayMs: TIMEOUT_MS + 500, status: 200 });
    const hookId = await newWebhook(`${receiver.url}/slow`);

    // Act
    const [attempt] = (await testSend(hookId)).attempt_log;

    // Assert
    expect(attempt).toMatchObject({
      status_code: 0,
      error: `timed out after ${TIMEOUT_MS} ms`,
      error_class: 'timeout',
      timings: { dns_ms: null, tls_ms: null, ttfb_ms: null },
    });
  });

  it('a redirect: redirect, with the status and a ttfb', async () => {
    // Arrange
    receiver.answer({ kind: 'redirect', status: 302, location: 'https://elsewhere.example/hook' });
    const hookId = await newWebhook(`${receiver.url}/moved`);

    // Act
    const [attempt] = (await testSend(hookId)).attempt_log;

    // Assert
    expect(attempt).toMatchObject({
      status_code: 302,
      error: 'redirect not followed (HTTP 302 to https://elsewhere.example/hook)',
      error_class: 'redirect',
    });
    expect(attempt?.timings.ttfb_ms).toEqual(expect.any(Number));
  });

  it('https to a self-signed certificate: tls_error with a readable text, after a timed TCP connect', async () => {
    // Arrange
    const dir = new URL('../fixtures/tls/', import.meta.url);
    let requests = 0;
    const server: HttpsServer = createHttpsServer(
      { key: readFileSync(new URL('key.pem', dir)), cert: readFileSync(new URL('cert.pem', dir)) },
      (_req, res) => {
        requests += 1;
        res.writeHead(200).end('ok');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const hookId = await newWebhook(`https://127.0.0.1:${port}/hook`);

      // Act
      const sent = await rt.call(`/webhooks/${hookId}/test`, { method: 'POST', key });
      const { message, delivery } = (await sent.json()) as { message: string; delivery: { id: string } };
      const view = (await (
        await rt.call(`/webhooks/${hookId}/deliveries/${delivery.id}`, { key })
      ).json()) as DeliveryView;

      // Assert
      expect(view.attempt_log[0]).toMatchObject({
        status_code: 0,
        error: 'TLS handshake failed: the certificate is self-signed',
        error_class: 'tls_error',
        timings: { dns_ms: null, connect_ms: expect.any(Number), tls_ms: null, ttfb_ms: null },
      });
      expect(message).toBe('Not delivered: TLS handshake failed: the certificate is self-signed.');
      expect(requests).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('GET /v1/webhooks/:id/deliveries?error_class=', () => {
  it('returns the deliveries whose latest attempt has that class, alone or with a status', async () => {
    // Arrange: attempts answered 500, 200, 500, 404 in that order.
    const answers = [500, 200, 500, 404];
    const hookId = await newWebhook(`${receiver.url}/filtered`);
    const made: DeliveryView[] = [];
    for (const status of answers) {
      receiver.answer({ kind: 'status', status });
      made.push(await testSend(hookId));
    }
    const list = async (query: string) => {
      const res = await rt.call(`/webhooks/${hookId}/deliveries?${query}`, { key });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: DeliveryView[] }).data.map((d) => d.id);
    };
    const [first, , third, fourth] = made.map((d) => d.id);

    // Act
    const http5xx = await list('error_class=http_5xx');
    const http4xx = await list('error_class=http_4xx');
    const failed5xx = await list('error_class=http_5xx&status=failed');
    const succeeded5xx = await list('error_class=http_5xx&status=succeeded');
    const paged = await list('error_class=http_5xx&limit=1');
    const timeouts = await list('error_class=timeout');

    // Assert: newest first.
    expect(http5xx).toEqual([third, first]);
    expect(http4xx).toEqual([fourth]);
    expect(failed5xx).toEqual([third, first]);
    expect(succeeded5xx).toEqual([]);
    expect(paged).toEqual([third]);
    expect(timeouts).toEqual([]);
  });

  it('refuses an unknown class with 422 naming error_class', async () => {
    // Arrange
    const hookId = await newWebhook(`${receiver.url}/bad-filter`);

    // Act
    const res = await rt.call(`/webhooks/${hookId}/deliveries?error_class=connection`, { key });

    // Assert
    expect(res.status).toBe(422);
    const body = (await res.json()) as { code: string; details: { path: string }[] };
    expect(body.code).toBe('validation_error');
    expect(body.details.map((d) => d.path)).toEqual(['error_class']);
  });
});
