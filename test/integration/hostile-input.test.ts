// Bad input over real HTTP: what used to answer 500 (deep JSON with an Idempotency-Key, a header named
// `constructor`, headers past DynamoDB's 400 KB item) and what SES v2 would refuse on AWS only (control
// characters in subjects and addresses, restricted or malformed headers) is a 422 at the API with a detail
// naming the field, and nothing is stored or queued.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

let rt: TestRuntime;
let key: string;
beforeAll(async () => {
  rt = await startTestRuntime({ SF_MAX_BODY_BYTES: String(4 * 1024 * 1024) });
  key = (await rt.newKey()).key;
});
afterAll(() => rt.stop());

const email = (extra: Record<string, unknown> = {}) => ({
  from: 'a@acme.test',
  to: 'b@example.com',
  subject: 'Hi',
  text: 'x',
  ...extra,
});
const send = (body: string, headers: Record<string, string> = {}, path = '/emails') =>
  rt.call(path, { method: 'POST', key, body, headers });

interface ErrorBody {
  status: number;
  code: string;
  error: string;
  details?: { path: string; message: string }[];
}

/** A 422 whose details include `path` (and whose message matches), with nothing stored or queued. */
async function expectRefused(res: Response, path: string, message?: RegExp): Promise<ErrorBody> {
  const body = (await res.json()) as ErrorBody;
  expect(res.status, JSON.stringify(body)).toBe(422);
  expect(body).toMatchObject({ status: 422, code: 'validation_error' });
  const detail = body.details?.find((d) => d.path === path);
  expect(detail, `no detail for ${path} in ${JSON.stringify(body.details)}`).toBeDefined();
  if (message) expect(detail?.message).toMatch(message);
  expect(rt.queues.sends.depth).toBe(0);
  return body;
}

describe('what used to answer 500', () => {
  it('5,000 levels of JSON with an Idempotency-Key: 422 naming the depth limit, and the key stays free', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const body = JSON.stringify(email()).replace(/}$/, `,"x":${deep}}`);
    const res = await send(body, { 'Idempotency-Key': 'deep-1' });
    await expectRefused(res, 'body', /nest/i);
    // The key was never claimed: a good request with it goes through.
    expect((await send(JSON.stringify(email()), { 'Idempotency-Key': 'deep-1' })).status).toBe(200);
    await rt.settle(); // its send, before the next test checks that nothing was queued
  });

  it('a batch nested too deep is refused the same way', async () => {
    const deep = `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`;
    await expectRefused(await send(`[${deep}]`, {}, '/emails/batch'), 'body', /nest/i);
  });

  it('headers that would push the item past 400 KB: 422 (count and size), nothing stored', async () => {
    const headers = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`X-H${i}`, 'v'.repeat(800)]));
    await expectRefused(await send(JSON.stringify(email({ headers }))), 'headers', /50/);
  });

  it('an email larger than 256 KB as stored: 422 naming the limit; in a batch, its index', async () => {
    const big = email({ html: 'h'.repeat(200 * 1024), text: 't'.repeat(100 * 1024) });
    await expectRefused(await send(JSON.stringify(big)), 'body', /256 KB/);
    const batch = [email(), email(), big];
    await expectRefused(await send(JSON.stringify(batch), {}, '/emails/batch'), '2', /256 KB/);
  });
});

describe('what SES v2 would refuse on AWS', () => {
  it.each([
    ['CR/LF in the subject', { subject: 'Hi\r\nBcc: eve@example.com' }, 'subject'],
    ['NUL in the subject', { subject: 'Hi\u0000' }, 'subject'],
    ['a tab in the subject', { subject: 'Hi\tthere' }, 'subject'],
    ['a lone surrogate in the subject', { subject: 'Hi \ud800' }, 'subject'],
    ['CR/LF in a header value', { headers: { 'X-Campaign': 'a\r\nBcc: eve@example.com' } }, 'headers.X-Campaign'],
    ['a non-ASCII header value', { headers: { 'X-Campaign': 'café' } }, 'headers.X-Campaign'],
    ['an empty header value', { headers: { 'X-Campaign': '' } }, 'headers.X-Campaign'],
    ['an 871-character header value', { headers: { 'X-Campaign': 'v'.repeat(871) } }, 'headers.X-Campaign'],
    ['a 5,000-character header name', { headers: { [`X-${'n'.repeat(4998)}`]: 'v' } }, 'headers'],
    ['a header name with a space', { headers: { 'X Campaign': 'v' } }, 'headers'],
    ['a header name with a colon', { headers: { 'X-Campaign:': 'v' } }, 'headers'],
    ['a header that is not a string', { headers: { 'X-Campaign': 1 } }, 'headers.X-Campaign'],
    ['headers that are not an object', { headers: ['X-Campaign', 'v'] }, 'headers'],
    ['NUL in an address', { to: 'b\u0000@example.com' }, 'to'],
    ['a comma in a domain', { to: 'b@exa,mple.com' }, 'to'],
    ['a non-ASCII local part', { to: 'bé@example.com' }, 'to'],
    ['two dots in a row in a local part', { to: 'b..c@example.com' }, 'to'],
    ['a domain label starting with a hyphen', { to: 'b@-example.com' }, 'to'],
    ['a control character in a display name', { from: 'Acme\u0007 <a@acme.test>' }, 'from'],
    ['a NUL in a reply_to display name', { reply_to: ['Acme\u0000 <a@acme.test>'] }, 'reply_to.0'],
  ])('%s: 422', async (_name, extra, path) => {
    await expectRefused(await send(JSON.stringify(email(extra))), path);
  });

  it.each([
    'From',
    'to',
    'CC',
    'Bcc',
    'Subject',
    'Reply-To',
    'Return-Path',
    'Sender',
    'Date',
    'Message-ID',
    'MIME-Version',
    'Content-Type',
    'Content-Transfer-Encoding',
    'DKIM-Signature',
    'X-SES-CONFIGURATION-SET',
    'x-ses-message-tags',
    'List-Unsubscribe',
    'list-unsubscribe-post',
  ])('the restricted header %s: 422 naming it', async (name) => {
    await expectRefused(await send(JSON.stringify(email({ headers: { [name]: 'v' } }))), `headers.${name}`, /set by/);
  });

  it('what SES takes goes through: 50 headers of 126-character names and 870-character values', async () => {
    const headers = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`X-${String(i).padStart(2, '0')}${'n'.repeat(121)}`, 'v'.repeat(870)]),
    );
    const res = await send(
      JSON.stringify(
        email({
          from: '"Acme, Inc." <billing@acme.test>',
          to: ['Ada Lovelace <ada@example.com>', 'info@bücher.example'],
          subject: 'Ünïcödé subject ✓',
          headers,
        }),
      ),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    await rt.settle();
  });
});
