// The local runtime's log lines and metrics (docs/deploy-and-operate.md, "Observability"): a failed delivery writes one
// `webhook attempt` line per attempt (a successful one none at INFO) (delivery, webhook, account, outcome, status,
// duration, error), and an API request that failed (4xx but 429, 5xx) or took 2 s or more one `api request` line
// (route, method, status, duration, request id, account) at INFO; with SF_METRICS=true the same EMF lines as on AWS
// follow each invocation. Nothing secret is ever written.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';
import { type CapturedStdout, captureStdout, emfSeries } from '../support/stdout';

let rt: TestRuntime;
let receiver: Receiver;
let stdout: CapturedStdout;
beforeAll(async () => {
  stdout = captureStdout();
  // Two automatic attempts, INFO lines and EMF on.
  rt = await startTestRuntime({ POWERTOOLS_LOG_LEVEL: 'INFO', SF_METRICS: 'true', SF_RETRY_DELAYS: '0.2' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rt?.stop();
  stdout.restore();
});

const linesWith = (message: string) => stdout.lines().filter((line) => line.message === message);

it('logs each failed attempt of a delivery, then counts it in EMF by error class', async () => {
  // Arrange
  const { key, accountId } = await rt.newKey();
  receiver.answer({ kind: 'status', status: 500, body: 'down' });
  const hookRes = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/hook`, events: ['email.sent'] }),
  });
  const hook = (await hookRes.json()) as { id: string; secret: string };

  // Act
  const sent = await rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'a@acme.example', to: ['ada@example.com'], subject: 'Hi', html: '<p>Hi</p>' }),
  });
  await receiver.waitFor(2);
  await rt.settle();

  // Assert: one line per attempt, the second ending the delivery.
  expect(sent.status).toBeLessThan(300);
  const attempts = linesWith('webhook attempt').filter((line) => line.webhook_id === hook.id);
  expect(attempts).toEqual([
    expect.objectContaining({
      level: 'INFO',
      account_id: accountId,
      mode: 'test',
      event_type: 'email.sent',
      attempt: 1,
      kind: 'automatic',
      outcome: 'failed',
      error_class: 'http_5xx',
      status_code: 500,
      error: 'HTTP 500',
      delivery_status: 'pending',
      recorded: true,
    }),
    expect.objectContaining({ attempt: 2, outcome: 'failed', status_code: 500, delivery_status: 'failed' }),
  ]);
  expect(attempts[0]?.delivery_id).toMatch(/^dlv_/);
  expect(attempts[1]?.delivery_id).toBe(attempts[0]?.delivery_id);
  expect(attempts[0]?.duration_ms).toEqual(expect.any(Number));
  expect(attempts[0]?.first_attempt_lag_ms).toEqual(expect.any(Number));
  expect(attempts[1]).not.toHaveProperty('first_attempt_lag_ms');

  // EMF, as CloudWatch would read it: the failures in total and by class, the email accepted and sent.
  const series = emfSeries(stdout.emf());
  const service = 'service=sendflow';
  expect(series[`Sendflow/DeliveriesFailed{${service},errorClass=http_5xx}`]?.values.length).toBeGreaterThanOrEqual(2);
  for (const name of ['DeliveriesAttempted', 'DeliveriesFailed', 'AttemptDuration', 'FirstAttemptLag']) {
    expect(series).toHaveProperty([`Sendflow/${name}{${service}}`]);
  }
  for (const name of ['EmailsAccepted', 'EmailsSent', 'ApiRequests']) {
    expect(series).toHaveProperty([`Sendflow/${name}{${service}}`]);
  }
  expect(series).toHaveProperty([`Sendflow/ApiRequests{${service},route=sendEmail,status=${sent.status}}`]);

  // Nothing secret: no API key, no signing secret, no webhook URL, no body.
  const all = JSON.stringify(stdout.lines());
  expect(all).not.toContain(key);
  expect(all).not.toContain(hook.secret);
  expect(all).not.toContain(receiver.url);
  expect(all).not.toContain('<p>Hi</p>');
});

it('writes no INFO line for an attempt that succeeded: the delivery log is its record', async () => {
  // Arrange
  const { key } = await rt.newKey();
  receiver.answer({ kind: 'status', status: 200, body: 'ok' });
  const hookRes = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/ok`, events: ['email.sent'] }),
  });
  const hook = (await hookRes.json()) as { id: string };
  const before = receiver.received.length;

  // Act
  await rt.call('/emails', {
    method: 'POST',
    key,
    body: JSON.stringify({ from: 'a@acme.example', to: ['bo@example.com'], subject: 'Hi', html: '<p>Hi</p>' }),
  });
  await receiver.waitFor(before + 1);
  await rt.settle();

  // Assert: delivered, recorded in the delivery log, and no attempt line; the EMF counts it.
  const listed = await rt.call(`/webhooks/${hook.id}/deliveries`, { key });
  const { data } = (await listed.json()) as { data: { status: string }[] };
  expect(data.map((d) => d.status)).toEqual(['succeeded']);
  expect(linesWith('webhook attempt').filter((line) => line.webhook_id === hook.id)).toEqual([]);
  expect(emfSeries(stdout.emf())).toHaveProperty(['Sendflow/DeliveriesSucceeded{service=sendflow}']);
});

it('logs an API request that failed at INFO with route, status, duration, request id and account; a success none', async () => {
  // Arrange
  const { key, accountId } = await rt.newKey();

  // Act
  const listed = await rt.call('/webhooks', { key });
  const denied = await rt.call('/webhooks', { key: 'sf_test_notarealkeynotarealkeynotarealkey12' });
  const unknown = await rt.call('/nowhere', { key });
  await rt.settle();

  // Assert: the success is counted, not logged; the refusals are logged.
  const byRequest = (res: Response) =>
    linesWith('api request').filter((line) => line.request_id === res.headers.get('x-request-id'));
  expect(listed.status).toBe(200);
  expect(byRequest(listed)).toEqual([]);
  expect(emfSeries(stdout.emf())).toHaveProperty([
    'Sendflow/ApiRequests{service=sendflow,route=listWebhooks,status=200}',
  ]);
  expect(byRequest(denied)).toEqual([
    expect.objectContaining({
      level: 'INFO',
      route: 'listWebhooks',
      method: 'GET',
      status: 401,
      duration_ms: expect.any(Number),
    }),
  ]);
  expect(byRequest(denied)[0]).not.toHaveProperty('account_id');
  expect(byRequest(unknown)).toEqual([
    expect.objectContaining({ level: 'INFO', route: 'unmatched', status: 404, account_id: accountId }),
  ]);
  expect(JSON.stringify(stdout.lines())).not.toContain(key);
});

it('logs a successful API request that took 2 s or more at INFO (a test event to a slow endpoint)', async () => {
  // Arrange
  const { key, accountId } = await rt.newKey();
  const hookRes = await rt.call('/webhooks', {
    method: 'POST',
    key,
    body: JSON.stringify({ url: `${receiver.url}/slow`, events: ['email.sent'] }),
  });
  const hook = (await hookRes.json()) as { id: string };
  receiver.answer({ kind: 'slow', delayMs: 2_050, status: 200 });

  // Act
  const tested = await rt.call(`/webhooks/${hook.id}/test`, { method: 'POST', key });

  // Assert
  expect(tested.status).toBeLessThan(300);
  const lines = linesWith('api request').filter((line) => line.request_id === tested.headers.get('x-request-id'));
  expect(lines).toEqual([
    expect.objectContaining({ level: 'INFO', route: 'testWebhook', method: 'POST', account_id: accountId }),
  ]);
  expect(lines[0]?.duration_ms).toBeGreaterThanOrEqual(2_000);
});
