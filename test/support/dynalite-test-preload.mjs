// A preload for dynalite's thread (startDynalite's `preload`) that makes two situations happen on demand:
// - a request for the table `crash-now` never gets an answer, and the thread exits (code 9);
// - a request for a table whose name ends in `-slow` waits 100 ms before dynalite looks the table up, so it is
//   still being worked on when a close() arrives.
// With `?createTableMs=N` on its URL, new tables also stay CREATING for N ms (the thread starts them at 0).
import { createRequire } from 'node:module';

const db = createRequire(import.meta.url)('dynalite/db');
const create = db.create;
const createTableMs = new URL(import.meta.url).searchParams.get('createTableMs');
db.create = (options) => {
  const store = create(createTableMs ? { ...options, createTableMs: Number(createTableMs) } : options);
  const getTable = store.getTable;
  store.getTable = (name, ...rest) => {
    if (name === 'crash-now') return setTimeout(() => process.exit(9), 20);
    if (name.endsWith('-slow')) return setTimeout(() => getTable(name, ...rest), 100);
    return getTable(name, ...rest);
  };
  return store;
};
