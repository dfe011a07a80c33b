// Connection time-outs of the local gateway, against raw sockets that trickle bytes (small values here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { received, socketTo } from '../support/raw-http';
import { startTestRuntime, type TestRuntime } from '../support/runtime';

describe('the local gateway', () => {
  let rt: TestRuntime;
  let key: string;
  beforeAll(async () => {
    rt = await startTestRuntime({
      SF_REQUEST_TIMEOUT_MS: '1500',
      SF_HEADERS_TIMEOUT_MS: '1000',
      SF_BODY_IDLE_TIMEOUT_MS: '600',
    });
    key = (await rt.newKey()).key;
  });
  afterAll(() => rt.stop());

  describe('time-outs for clients that trickle (1.5 s request, 1 s headers, 0.6 s body idle)', () => {
    it('headers trickled byte by byte: the socket is closed at the headers time-out', async () => {
      const socket = await socketTo(rt);
      const got = received(socket);
      const line = 'GET /v1/webhooks HTTP/1.1\r\nHost: x\r\nX-Slow: ';
      socket.write(line);
      const timer = setInterval(() => socket.writable && socket.write('a'), 100);
      const ms = await got.closed;
      clearInterval(timer);
      expect(ms).toBeLessThan(4_000);
      expect(got.text()).toMatch(/^(HTTP\/1\.1 408 |$)/);
    });

    it('a body trickled byte by byte: the request is cut at the request time-out', async () => {
      const socket = await socketTo(rt);
      const got = received(socket);
      socket.write(
        `POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 1000\r\n\r\n`,
      );
      const timer = setInterval(() => socket.writable && socket.write(' '), 100);
      const ms = await got.closed;
      clearInterval(timer);
      expect(ms).toBeLessThan(4_000);
      expect(got.text()).toMatch(/^HTTP\/1\.1 408 /);
    });

    it('a body that stops arriving: the request is cut at the body idle time-out', async () => {
      const socket = await socketTo(rt);
      const got = received(socket);
      socket.write(
        `POST /v1/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 1000\r\n\r\n{`,
      );
      const ms = await got.closed;
      expect(ms).toBeLessThan(1_400);
      expect(got.text()).toMatch(/^HTTP\/1\.1 408 /);
      expect(got.text()).toMatch(/"code":"request_timeout"/);
      expect(got.text()).toMatch(
        /"name":"request_timeout","message":"The request body sent nothing[^"]*","statusCode":408/,
      );
    });
  });
});
