// Raw HTTP for gateway tests: node:http keeps header names as written (fetch lower-cases them), and raw
// sockets let a test send a body slowly, partly, or not at all.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { TestRuntime } from './runtime';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http keeps header names as written (fetch lower-cases them), which is what these tests need. */
export function raw(rt: TestRuntime, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<RawResponse>((resolve, reject) => {
    const req = request(`${rt.url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw socket to the runtime; resolves what the server wrote once it closes (or after `waitMs`). */
export function socketTo(rt: TestRuntime): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(rt.port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

export function received(socket: Socket): { text: () => string; closed: Promise<number> } {
  let text = '';
  const started = Date.now();
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    text += d;
  });
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
  socket.on('error', () => {});
  return { text: () => text, closed };
}

export function untilText(socket: Socket, pattern: RegExp, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms: ${text}`)), timeoutMs);
    socket.on('data', (d: Buffer | string) => {
      text += d.toString();
      if (pattern.test(text)) {
        clearTimeout(timer);
        resolve(text);
      }
    });
  });
}
