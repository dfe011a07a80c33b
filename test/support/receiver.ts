// A real webhook receiver for integration tests (node:http on port 0). It records every request with its
// raw body, verifies signatures independently of the code under test, and answers as told: 2xx, 5xx, a
// redirect, slowly, or never. The answer can be switched mid-test.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Answer =
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  | { kind: 'redirect'; status: 301 | 302 | 307 | 308; location: string }
  | { kind: 'slow'; delayMs: number; status: number }
  | { kind: 'hang' };

export interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: number;
}

/** A request's single-valued headers as a plain map (what a receiver passes to a signature library). */
export function stringHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The answer for the next requests; a function may vary it by request number (1-based). */
  answer(answer: Answer | ((n: number) => Answer)): void;
  /** Resolves when `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let choose: (n: number) => Answer = () => ({ kind: 'status', status: 200, body: 'ok' });
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const answer = choose(received.length);
      if (answer.kind === 'hang') return void hanging.add(res);
      if (answer.kind === 'redirect') return void res.writeHead(answer.status, { Location: answer.location }).end();
      if (answer.kind === 'slow')
        return void setTimeout(() => res.writeHead(answer.status).end('slow'), answer.delayMs);
      res.writeHead(answer.status, { 'Content-Type': 'text/plain', ...answer.headers }).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer(answer) {
      choose = typeof answer === 'function' ? answer : () => answer;
    },
    async waitFor(count, timeoutMs = 15_000) {
      const started = Date.now();
      while (received.length < count) {
        if (Date.now() - started > timeoutMs) throw new Error(`receiver got ${received.length} of ${count} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received.slice(0, count);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** X-Service-Signature as a receiver checks it: hex HMAC-SHA256 of the raw body, constant-time compare. */
export function verifyServiceSignature(secret: string, request: Received): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(request.body).digest('hex'));
  const given = Buffer.from(String(request.headers['x-service-signature'] ?? ''));
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Standard Webhooks verification, written from the specification (not from our code). */
export function verifyStandardWebhook(secret: string, request: Received): boolean {
  const id = String(request.headers['webhook-id']);
  const timestamp = String(request.headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest('base64');
  const signatures = String(request.headers['webhook-signature'] ?? '').split(' ');
  return signatures.some((s) => s === `v1,${expected}`);
}
