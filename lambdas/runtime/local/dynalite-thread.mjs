// The embedded DynamoDB's own thread: dynalite, on disk or in memory, serving two doors onto one store.
// - A loopback HTTP port, for clients outside the runtime (the admin CLI, tests, any DynamoDB tool).
// - The parent's MessagePort, for the runtime's own client: each message is one DynamoDB JSON request, handed
//   to the request listener the HTTP server uses, without a socket, an HTTP parser or a SigV4 signature.
// Keeping dynalite off the runtime's event loop lets it use a second core.
//
// Plain JavaScript: a worker thread starts without the parent's TypeScript loader on Node 20. The message
// shapes (ThreadOptions, ThreadRequest, ThreadMessage) are declared in dynamo.ts.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import dynalite from 'dynalite';

// dynalite checks that a request carries SigV4's parts, not what they sign. Messages come from this process.
const SIGNED = {
  'content-type': 'application/x-amz-json-1.0',
  authorization:
    'AWS4-HMAC-SHA256 Credential=local/20000101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
  'x-amz-date': '20000101T000000Z',
};

/** Calls dynalite's HTTP request listener with an in-memory request and response. */
function answer(listener, { id, target, body }, reply) {
  const headers = {};
  const req = Object.assign(new EventEmitter(), {
    method: 'POST',
    url: '/',
    headers: { ...SIGNED, 'x-amz-target': target },
  });
  const res = {
    statusCode: 200,
    setHeader(name, value) {
      headers[name.toLowerCase()] = String(value);
    },
    end(text) {
      reply({ id, status: res.statusCode, headers, body: text ?? '' });
    },
  };
  listener(req, res);
  req.emit('data', Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  req.emit('end');
}

/**
 * Starts dynalite and waits for its store to open. dynalite opens it lazily and swallows the failure (another
 * process holding the directory's lock): the store is caught on its way out of dynalite's `db.create` so that
 * its opening can be awaited, and a failure told to the parent at start, not at its first request.
 */
async function startDynalite(options) {
  const db = createRequire(import.meta.url)('dynalite/db');
  const create = db.create;
  let store;
  db.create = (...args) => {
    store = create(...args);
    return store;
  };
  try {
    const server = dynalite(options);
    await store.db.open();
    return server;
  } finally {
    db.create = create;
  }
}

async function main(port, { path, preload }) {
  if (preload) await import(preload);
  let server;
  try {
    server = await startDynalite({ ...(path ? { path } : {}), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  } catch (error) {
    port.postMessage({ id: 0, failed: `the store does not open: ${(error.cause ?? error).message}` });
    return;
  }
  const listener = server.listeners('request')[0];
  const reply = (message) => port.postMessage(message);
  port.on('message', (request) => {
    if (request.id !== 0) return answer(listener, request, reply);
    // The parent sends this once nothing of its own is in flight; dynalite then closes its store.
    server.close(() => reply({ id: 0, closed: true }));
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  reply({ id: 0, ready: { port: server.address().port } });
}

if (parentPort) await main(parentPort, workerData);
