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
import { Readable } from 'node:stream';
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
    closeIteratorsWhenDone(store.db);
    await store.db.open();
    return server;
  } finally {
    db.create = create;
  }
}

/**
 * dynalite 4 reads every Query and Scan (and ListTables, and a deleted table's keys) through `createValueStream`
 * or `createKeyStream` on its Level store: a Readable over a LevelDB iterator whose destroy() calls
 * `iterator.return()`, which abstract-level iterators do not have, and whose end does not close the iterator
 * either. So every Query and Scan left its iterator open, held in the store's resource set until the store
 * closed. An open LevelDB iterator pins the version it reads (its memtable and table files): compactions ran
 * and wrote new files but could delete none of the old ones, so the data directory grew by everything ever
 * written, and memory by the pinned memtables, table handles and blocks. These streams close their iterator
 * when they end, fail, or are destroyed (dynalite destroys one when `Limit` or the 1 MB page cuts a read
 * short). A closing iterator finishes the read it is doing first (abstract-level waits for it).
 */
function closeIteratorsWhenDone(db) {
  const stream = (iterator) =>
    new Readable({
      objectMode: true,
      read() {
        iterator.next().then(
          (item) => this.push(item === undefined ? null : item),
          (error) => this.destroy(error),
        );
      },
      // Also runs at the end of the data (autoDestroy).
      destroy(error, done) {
        iterator.close().then(
          () => done(error),
          (closeError) => done(error ?? closeError),
        );
      },
    });
  db.createValueStream = (options) => stream(db.values(options));
  db.createKeyStream = (options) => stream(db.keys(options));
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
