// Truly simultaneous requests: `count` connections opened first, then the same request written on each in one
// go, so all have arrived before any is answered (fetch gives no such guarantee: its requests leave one by one).
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly body: { code?: string; readonly [field: string]: unknown };
}

/**
 * POSTs `path` (below the stage URL `base`) with `key` on `count` connections at once; resolves the answers in
 * the connections' order. `bodyOf(i)`: the JSON body of the i-th request (none when absent).
 */
export async function simultaneousPosts(
  base: string,
  path: string,
  key: string,
  count: number,
  bodyOf?: (index: number) => string,
): Promise<RawAnswer[]> {
  const sockets = await openSockets(base, count);
  const answers = sockets.map(answerOf);
  const { hostname, port, pathname } = new URL(base);
  const request = (body: string) =>
    `POST ${pathname}${path} HTTP/1.0\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${key}\r\n` +
    `${body ? 'Content-Type: application/json\r\n' : ''}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  // Let the server accept every connection first, so the requests' bytes are all there when it next reads.
  await new Promise((r) => setTimeout(r, 300));
  for (const [i, socket] of sockets.entries()) socket.write(request(bodyOf?.(i) ?? ''));
  return Promise.all(answers);
}

function openSockets(base: string, count: number): Promise<Socket[]> {
  const { hostname, port } = new URL(base);
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), hostname, () => resolve(socket));
          socket.once('error', reject);
        }),
    ),
  );
}

/** HTTP/1.0: one answer per connection, which the server closes after it. */
function answerOf(socket: Socket): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      resolve({ status: Number(text.split(' ')[1]), body: JSON.parse(body) });
    });
  });
}
