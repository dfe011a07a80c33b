// Request bodies limited before they are buffered, on every route: refused by Content-Length at once,
// cut as soon as a chunked body passes the limit, and not read at all for a request that fails to authenticate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SEND_BODY_BYTES } from '../../lambdas/domain/body-ceiling';
import { raw, socketTo, untilText } from '../support/raw-http';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

describe('the local gateway', () => {
  let rt: TestRuntime;
  let key: string;
  beforeAll(async () => {
    rt = await startTestRuntime({
      SF_MAX_BODY_BYTES: '4096',
    });
    key = (await rt.newKey()).key;
  });
  afterAll(() => rt.stop());

  describe('bodies are limited before they are buffered (SF_MAX_BODY_BYTES = 4096)', () => {
    it('a declared Content-Length past the limit is 413 at once, on a public route, before any body byte', async () => {
      const socket = await socketTo(rt);
      const answer = untilText(socket, /"code":"\w+"/);
      socket.write(
        'POST /v1/unsubscribe/anything HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 52428800\r\n\r\n',
      );
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text).toMatch(/"code":"payload_too_large"/);
      expect(text).toMatch(/connection: close/i);
      socket.destroy();
    });

    it('a public route refuses a body past the limit (it used to take up to 10 MB)', async () => {
      const res = await fetch(`${rt.url}/unsubscribe/anything`, { method: 'POST', body: 'x'.repeat(5000) });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ status: 413, code: 'payload_too_large' });
    });

    it('a chunked body is refused as soon as it passes the limit, without waiting for its end', async () => {
      const socket = await socketTo(rt);
      const answer = untilText(socket, /"code":"\w+"/);
      socket.write(
        `POST /v1/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      const chunk = 'x'.repeat(3000);
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      // No terminating chunk: the server must not wait for one.
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      socket.destroy();
    });

    it('an anonymous request is answered 401 before its body is read', async () => {
      const socket = await socketTo(rt);
      const answer = untilText(socket, /"code":"\w+"/);
      socket.write('POST /v1/emails HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n');
      const text = await answer; // no body byte sent
      expect(text).toMatch(/^HTTP\/1\.1 401 /);
      socket.destroy();
    });

    it('a body within the limit still works, on keep-alive, after a refused one', async () => {
      const res = await raw(
        rt,
        'POST',
        '/api-keys',
        { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        JSON.stringify({ scopes: ['email:send'], name: 'fine' }),
      );
      expect(res.status).toBe(201);
    });
  });

  describe('the send routes default to the AWS ceiling (MAX_SEND_BODY_BYTES, the WAF limit)', () => {
    let defaults: TestRuntime;
    let sender: string;
    beforeAll(async () => {
      defaults = await startTestRuntime({});
      sender = (await defaults.newKey()).key;
    });
    afterAll(() => defaults.stop());

    it('a declared Content-Length one byte past 3,000,000 is 413 at once', async () => {
      expect(MAX_SEND_BODY_BYTES).toBe(3_000_000);
      const socket = await socketTo(defaults);
      const answer = untilText(socket, /"code":"\w+"/);
      socket.write(
        `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sender}\r\nContent-Type: application/json\r\nContent-Length: ${MAX_SEND_BODY_BYTES + 1}\r\n\r\n`,
      );
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 413 /);
      expect(text).toMatch(/"code":"payload_too_large"/);
      socket.destroy();
    });

    it('a body of exactly 3,000,000 bytes is read and judged on its content, not refused for its size', async () => {
      const json = JSON.stringify({ from: 'not an address' });
      const body = `${json}${' '.repeat(MAX_SEND_BODY_BYTES - json.length)}`;
      expect(Buffer.byteLength(body)).toBe(MAX_SEND_BODY_BYTES);
      const res = await fetch(`${defaults.url}/emails`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${sender}`, 'Content-Type': 'application/json' },
        body,
      });
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({ code: 'validation_error' });
    });
  });
});
