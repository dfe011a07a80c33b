// Traces from the API call to the receiver (docs/webhooks.md#traces), over real HTTP: a local OTLP/HTTP receiver
// gets the spans of one send end to end (the API request's span under the caller's traceparent, each event's span
// under it, each delivery attempt's span under its event's, a retry's too), with ids, attempt numbers and statuses
// and no secret or body in any attribute; the webhook receiver's `traceparent` carries the same trace id and names
// the attempt's span. With tracing off, a caller's traceparent passes through unchanged, and none is invented.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';
import { type Receiver, startReceiver } from '../support/receiver';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const callerTraceparent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

let rt: TestRuntime;
let off: TestRuntime;
let receiver: Receiver;
let otlp: OtlpReceiver;

beforeAll(async () => {
  [otlp, receiver] = await Promise.all([startOtlpReceiver(), startReceiver()]);
  // One runtime exporting spans (a short export delay), one with tracing off.
  [rt, off] = await Promise.all([
    startTestRuntime({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'sendflow-test' }),
    startTestRuntime(),
  ]);
});
afterAll(async () => {
  await Promise.all([rt?.stop(), off?.stop()]);
  await Promise.all([receiver?.close(), otlp?.close()]);
});

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> });

async function webhookAndSend(runtime: TestRuntime, path: string, headers: Record<string, string>) {
  const { key } = await runtime.newKey();
  const hook = await json(
    await runtime.call('/webhooks', {
      method: 'POST',
      key,
      body: JSON.stringify({ url: `${receiver.url}${path}`, events: ['email.sent', 'email.delivered'] }),
    }),
  );
  expect(hook.status).toBe(201);
  const sent = await json(
    await runtime.call('/emails', {
      method: 'POST',
      key,
      headers,
      body: JSON.stringify({
        from: 'news@acme.test',
        to: 'reader@example.com',
        subject: 'Secret subject',
        text: 'the body nobody may trace',
      }),
    }),
  );
  expect(sent.status).toBe(200);
  return { key, webhookId: String(hook.body.id), secret: String(hook.body.secret), emailId: String(sent.body.id) };
}

const parentOf = (header: string | string[] | undefined) => String(header).split('-')[2];

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('exports the API span, each event span and each attempt span of one send, linked, and the receiver joins it', async () => {
    // Arrange: the first attempt of each delivery fails (500), the retry succeeds.
    receiver.answer((n) => ({ kind: 'status', status: n <= 2 ? 500 : 200 }));
    const { key, webhookId, secret, emailId } = await webhookAndSend(rt, '/on', {
      traceparent: callerTraceparent,
      tracestate: 'caller=abc',
    });

    // Act: every event delivered (two attempts each), then the spans exported.
    await rt.settle();
    const requests = receiver.received.filter((r) => r.path === '/on');
    expect(requests).toHaveLength(4);
    await rt.services.tracing.flush();
    const spans = await otlp.waitFor((all) => all.filter((s) => s.kind === CLIENT).length >= 4);

    // Assert: the API span continues the caller's trace.
    const api = spans.find((s) => s.kind === SERVER && s.attributes['sendflow.email.id'] === emailId) as ReceivedSpan;
    expect(api).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN, serviceName: 'sendflow-test' });
    expect(api.name).toMatch(/^POST .*emails$/);
    expect(api.attributes['http.response.status_code']).toBe(200);
    // Each event's span is the API span's child; each attempt's span is its event's child.
    const events = spans.filter((s) => s.kind === CONSUMER && s.attributes['sendflow.email.id'] === emailId);
    expect(events.map((s) => s.attributes['sendflow.event.type']).sort()).toEqual(['email.delivered', 'email.sent']);
    for (const event of events) expect(event).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: api.spanId });
    const attempts = spans.filter((s) => s.kind === CLIENT && s.attributes['sendflow.webhook.id'] === webhookId);
    expect(attempts).toHaveLength(4);
    for (const event of events) {
      const mine = attempts
        .filter((s) => s.parentSpanId === event.spanId)
        .sort((a, b) => Number(a.attributes['sendflow.attempt']) - Number(b.attributes['sendflow.attempt']));
      expect(mine.map((s) => [s.attributes['sendflow.attempt'], s.attributes['http.response.status_code']])).toEqual([
        [1, 500],
        [2, 200],
      ]);
      expect(mine.map((s) => s.attributes['sendflow.delivery.status'])).toEqual(['pending', 'succeeded']);
      expect(mine[0]?.statusCode).toBe(2);
      expect(mine[0]?.attributes['error.type']).toBe('http_5xx');
      for (const span of mine) expect(span.traceId).toBe(CALLER_TRACE);
    }
    // The receiver's traceparent carries the trace and names the attempt's span; tracestate goes along.
    for (const request of requests) {
      expect(request.headers.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
      expect(attempts.map((s) => s.spanId)).toContain(parentOf(request.headers.traceparent));
      expect(request.headers.tracestate).toBe('caller=abc');
    }
    // No secret, key, subject, body or address in any attribute of any span.
    const values = spans.flatMap((s) => Object.values(s.attributes).map(String));
    for (const forbidden of [secret, key, 'Secret subject', 'nobody may trace', 'reader@example.com', 'whsec_'])
      expect(values.filter((v) => v.includes(forbidden))).toEqual([]);
    // The stored delivery log does not keep the trace headers (the row's size is unchanged on failure).
    const log = await json(await rt.call(`/webhooks/${webhookId}/deliveries`, { key }));
    expect(JSON.stringify(log.body)).not.toContain('traceparent');
  });

  it('starts a new trace for a request without a traceparent, and the receiver sees its id', async () => {
    receiver.answer({ kind: 'status', status: 200 });
    const before = receiver.received.length;
    const { emailId } = await webhookAndSend(rt, '/root', {});
    await rt.settle();
    await rt.services.tracing.flush();
    const spans = await otlp.waitFor((all) =>
      all.some((s) => s.kind === SERVER && s.attributes['sendflow.email.id'] === emailId),
    );
    const api = spans.find((s) => s.kind === SERVER && s.attributes['sendflow.email.id'] === emailId) as ReceivedSpan;
    expect(api.parentSpanId).toBe('');
    const got = receiver.received.slice(before).filter((r) => r.path === '/root');
    expect(got).toHaveLength(2);
    for (const request of got) expect(String(request.headers.traceparent)).toContain(`-${api.traceId}-`);
    for (const request of got) expect(request.headers.tracestate).toBeUndefined();
  });
});

describe('tracing off (no endpoint)', () => {
  it("passes a caller's traceparent through unchanged, and sends none when the caller sent none", async () => {
    receiver.answer({ kind: 'status', status: 200 });
    const before = receiver.received.length;
    await webhookAndSend(off, '/off-traced', { traceparent: callerTraceparent });
    await webhookAndSend(off, '/off-plain', {});
    await off.settle();
    const got = receiver.received.slice(before);
    const traced = got.filter((r) => r.path === '/off-traced');
    const plain = got.filter((r) => r.path === '/off-plain');
    expect([traced.length, plain.length]).toEqual([2, 2]);
    for (const request of traced) expect(request.headers.traceparent).toBe(callerTraceparent);
    for (const request of plain) expect(request.headers.traceparent).toBeUndefined();
    expect(off.services.tracing.enabled).toBe(false);
  });
});
