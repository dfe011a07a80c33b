// Every error status over real HTTP: status, JSON body shape, and the headers every response carries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let full: string;
let sendOnly: string;

beforeAll(async () => {
  rt = await startTestRuntime({ SF_MAX_BODY_BYTES: '2048', SF_IP_RATE_LIMIT: '1000' });
  full = (await rt.newKey()).key;
  sendOnly = (await rt.newKey({ scopes: ['email:send'] })).key;
});
afterAll(() => rt.stop());

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect(res.headers.get(h), h).toMatch(/^\d+$/);
  }
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const body = (await res.json()) as Record<string, unknown>;
  expectResendFields(body, status, code);
  return body;
}

/** The spec's fields and Resend's (name, message, statusCode), consistent: what any error path must answer. */
function expectResendFields(body: Record<string, unknown>, status: number, code: string) {
  expect(body).toMatchObject({ status, code, statusCode: status });
  expect(typeof body.error).toBe('string');
  expect((body.error as string).length).toBeGreaterThan(0);
  expect(body.message).toBe(body.error);
  expect(body.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
}

describe('error responses', () => {
  it('400 invalid_json for a malformed body', async () => {
    const res = await rt.call('/api-keys', { method: 'POST', key: full, body: '{"scopes": [' });
    expect((await expectError(res, 400, 'invalid_json')).name).toBe('validation_error');
  });

  it.each([
    ['missing', undefined, /Missing API key/, 'missing_api_key'],
    ['malformed', 'Bearer not-a-key', /Malformed/, 'invalid_api_key'],
    ['unknown', `Bearer sf_test_${'a'.repeat(40)}`, /Invalid API key/, 'invalid_api_key'],
    [
      'non-bearer scheme',
      'Basic dXNlcjpwYXNz',
      /Bearer scheme: send the header Authorization: Bearer <API_KEY>/,
      'missing_api_key',
    ],
    ['key without `Bearer `', `sf_test_${'a'.repeat(40)}`, /add "Bearer " before the key/, 'missing_api_key'],
  ])('401 unauthorized for a %s key', async (_, authorization, message, name) => {
    const res = await rt.call('/api-keys', { headers: authorization ? { Authorization: authorization } : {} });
    const body = await expectError(res, 401, 'unauthorized');
    expect(body.error).toMatch(message);
    expect(body.name).toBe(name);
    // Unauthenticated requests are counted per client IP, with that limit in the headers.
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('403 insufficient_scope when the key lacks the route scope', async () => {
    const res = await rt.call('/api-keys', { key: sendOnly });
    const body = await expectError(res, 403, 'insufficient_scope');
    expect(body.error).toMatch(/full-access/);
    expect(body.name).toBe('restricted_api_key');
  });

  it('404 not_found for an unknown route, with or without a key', async () => {
    await expectError(await rt.call('/nothing-here', { key: full }), 404, 'not_found');
    await expectError(await rt.call('/nothing-here'), 404, 'not_found');
    const outsideStage = await fetch(rt.url.replace(/\/v1$/, '/v2/api-keys'));
    await expectError(outsideStage, 404, 'not_found');
  });

  it('404 for a route without /v1 says where the API lives', async () => {
    const res = await fetch(rt.url.replace(/\/v1$/, '/emails'), { headers: { Authorization: `Bearer ${full}` } });
    const body = await expectError(res, 404, 'not_found');
    expect(body.error).toBe('No route GET /emails. The API lives under /v1: GET /v1/emails.');
    const unknown = await expectError(await fetch(rt.url.replace(/\/v1$/, '/nothing')), 404, 'not_found');
    expect(unknown.error).toBe('No route GET /nothing.');
  });

  it('422 for an unknown event type suggests the closest one and lists the valid ones', async () => {
    const res = await rt.call('/webhooks', {
      method: 'POST',
      key: full,
      body: JSON.stringify({ url: 'https://example.com/hook', events: ['email.deliverd', 'nonsense'] }),
    });
    const body = await expectError(res, 422, 'validation_error');
    const [typo, other] = body.details as { path: string; message: string }[];
    expect(typo).toEqual({
      path: 'events.0',
      message: expect.stringMatching(
        /^`events\[0\]`: Unknown event type "email\.deliverd"\. Did you mean "email\.delivered"\? Valid types: email\.scheduled, email\.sent, /,
      ),
    });
    expect(other?.message).toMatch(
      /^`events\[1\]`: Unknown event type "nonsense"\. Valid types: email\.scheduled, .*email\.delivered/,
    );
    expect(other?.message).not.toMatch(/Did you mean/);
  });

  it('404 not_found for an unknown id', async () => {
    await expectError(await rt.call('/api-keys/key_nope', { method: 'DELETE', key: full }), 404, 'not_found');
  });

  it('404 (not a storage error) for ids longer than any id can be', async () => {
    await expectError(
      await rt.call(`/api-keys/${'k'.repeat(1100)}`, { method: 'DELETE', key: full }),
      404,
      'not_found',
    );
    await expectError(await rt.call(`/unsubscribe/${'t'.repeat(3000)}`), 404, 'not_found');
  });

  it('405 method_not_allowed with an Allow header', async () => {
    const res = await rt.call('/api-keys', { method: 'PATCH', key: full });
    await expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);
  });

  it('413 payload_too_large past the configured body limit, and nothing is created', async () => {
    const before = (await (await rt.call('/api-keys', { key: full })).json()) as { data: unknown[] };
    const body = JSON.stringify({ scopes: ['email:send'], name: 'x'.repeat(4096) });
    // Refused by the gateway before the body is read, as API Gateway's own 413: the error shape and a request
    // id, but no rate-limit headers (the request never reached the API Lambda's window).
    const res = await rt.call('/api-keys', { method: 'POST', key: full, body });
    expect(res.status).toBe(413);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expectResendFields((await res.json()) as Record<string, unknown>, 413, 'payload_too_large');
    const after = (await (await rt.call('/api-keys', { key: full })).json()) as { data: unknown[] };
    expect(after.data).toHaveLength(before.data.length);
  });

  it('422 validation_error with details for each problem', async () => {
    const res = await rt.call('/api-keys', {
      method: 'POST',
      key: full,
      body: JSON.stringify({ scopes: ['email:send', 'mail:everything'], name: '', extra: 1 }),
    });
    const body = await expectError(res, 422, 'validation_error');
    const details = body.details as { path: string; message: string }[];
    expect(details.map((d) => d.path).sort()).toEqual(expect.arrayContaining(['name', 'scopes.1']));
    expect(details.some((d) => /extra/.test(d.message))).toBe(true);
  });

  it("422 names a send's missing fields and a bad from as Resend does", async () => {
    const missing = await expectError(
      await rt.call('/emails', { method: 'POST', key: full, body: JSON.stringify({ subject: 'Hi', text: 'x' }) }),
      422,
      'validation_error',
    );
    expect(missing.name).toBe('missing_required_field');
    const badFrom = await expectError(
      await rt.call('/emails', {
        method: 'POST',
        key: full,
        body: JSON.stringify({ from: 'not an address', to: 'a@example.com', subject: 'Hi', text: 'x' }),
      }),
      422,
      'validation_error',
    );
    expect(badFrom.name).toBe('invalid_from_address');
  });

  it('400 invalid_json says where the JSON breaks: line and column', async () => {
    const res = await rt.call('/emails', {
      method: 'POST',
      key: full,
      body: '{\n  "from": "a@example.com",\n  "to": x\n}',
    });
    const body = await expectError(res, 400, 'invalid_json');
    expect(body.message).toMatch(/^The request body is not valid JSON: line 3, column 9: /);
  });
});

/** A send that is valid but for what a test changes. */
const valid = { from: 'a@example.com', to: 'b@example.com', subject: 'Hi', text: 'x' };

describe('422s say what is wrong in `message`, with the field path; `details` keeps every cause', () => {
  const send = (body: unknown) =>
    rt
      .call('/emails', { method: 'POST', key: full, body: JSON.stringify(body) })
      .then((res) => expectError(res, 422, 'validation_error'));

  it('a missing subject', async () => {
    const { subject: _, ...noSubject } = valid;
    const body = await send(noSubject);
    expect(body.message).toBe('`subject` is required.');
    expect(body.details).toEqual([{ path: 'subject', message: '`subject` is required.' }]);
  });

  it('a bad address in to[1]', async () => {
    const body = await send({ ...valid, to: ['ok@example.com', 'nope'] });
    expect(body.message).toMatch(/^`to\[1\]` is not an email address: "nope" /);
    expect(body.details).toEqual([{ path: 'to.1', message: body.message }]);
  });

  it('replyTo: an unknown field, with the field it was meant to be', async () => {
    const body = await send({ ...valid, replyTo: 'c@example.com' });
    expect(body.message).toBe('Unknown field `replyTo`: did you mean `reply_to`?');
    expect(body.details).toEqual([{ path: 'replyTo', message: body.message }]);
  });

  it('several problems: the first in `message` (and how many more), each in `details`', async () => {
    const body = await send({ from: 'a@example.com', to: ['b@example.com', 7], subject: '', text: 'x', Html: 'y' });
    const details = body.details as { path: string; message: string }[];
    expect(details.map((d) => d.path)).toEqual(['Html', 'to.1', 'subject']);
    expect(body.message).toBe(`${details[0]?.message} (2 more problems in \`details\`.)`);
    expect(details[0]?.message).toBe('Unknown field `Html`: did you mean `html`?');
    expect(details[1]?.message).toMatch(/^`to\[1\]` must be an email address/);
    expect(details[2]?.message).toBe('`subject` must not be empty.');
  });

  it('a batch names the email by its index', async () => {
    const res = await rt.call('/emails/batch', {
      method: 'POST',
      key: full,
      body: JSON.stringify([valid, { ...valid, scheduledAt: 'in 1 hour' }]),
    });
    const body = await expectError(res, 422, 'validation_error');
    expect(body.message).toBe('Unknown field `[1].scheduledAt`: did you mean `scheduled_at`?');
  });
});

describe('error responses (idempotency)', () => {
  it('400 invalid_idempotency_key for a malformed Idempotency-Key', async () => {
    const res = await rt.call('/emails', {
      method: 'POST',
      key: full,
      headers: { 'Idempotency-Key': 'é'.repeat(3) },
      body: JSON.stringify({ from: 'a@example.com', to: 'b@example.com', subject: 'Hi', text: 'x' }),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expectResendFields(body, res.status, body.code as string);
    expect(body.name).toBe('invalid_idempotency_key');
  });
});
