// Loaded by bench:cost into the embedded DynamoDB's thread (startLocalRuntime's `dynamoPreload`) before dynalite
// starts. It logs every write as dynalite applies it: the table, the item before and after (every successful
// Put, Update and Delete goes through `db.updateIndexes`), and every write whose condition failed with the item
// it was checked against (`db.checkConditional`), since AWS bills those too. The meter's main thread prices
// them (bench/cost/billing.ts); it drives this log over a BroadcastChannel: enable, disable, take.
//
// Plain JavaScript, as dynalite-thread.mjs: it runs where the parent's TypeScript loader may not.
import { createRequire } from 'node:module';

export const CHANNEL = 'sendflow-bench-write-log';

const db = createRequire(import.meta.url)('dynalite/db');
if (typeof db.updateIndexes !== 'function' || typeof db.checkConditional !== 'function') {
  throw new Error('dynalite/db has no updateIndexes/checkConditional: writes cannot be logged');
}

let enabled = false;
/** Writes since the last take: { table, before, after } or { table, failed: true, before }. */
let log = [];
/** Table name → its key schema and indexes, as dynalite holds the table's description. */
const shapes = new Map();

const shapeOf = (table) => {
  if (!shapes.has(table.TableName)) {
    shapes.set(table.TableName, {
      keys: table.KeySchema.map((k) => k.AttributeName),
      indexes: (table.GlobalSecondaryIndexes ?? []).map((index) => ({
        name: index.IndexName,
        keys: index.KeySchema.map((k) => k.AttributeName),
        projection: index.Projection ?? { ProjectionType: 'ALL' },
      })),
    });
  }
};

const updateIndexes = db.updateIndexes;
db.updateIndexes = (store, table, oldItem, newItem, cb) => {
  if (enabled) {
    shapeOf(table);
    log.push({ table: table.TableName, before: oldItem ?? undefined, after: newItem ?? undefined });
  }
  return updateIndexes(store, table, oldItem, newItem, cb);
};

const checkConditional = db.checkConditional;
db.checkConditional = (data, existingItem) => {
  const failed = checkConditional(data, existingItem);
  if (enabled && failed != null) {
    log.push({ table: data.TableName, failed: true, before: existingItem ?? undefined, key: data.Key ?? data.Item });
  }
  return failed;
};

const channel = new BroadcastChannel(CHANNEL);
channel.onmessage = ({ data }) => {
  if (data.type === 'enable' || data.type === 'disable') enabled = data.type === 'enable';
  const taken = data.type === 'take' ? log : [];
  if (data.type === 'take' || data.type === 'reset') log = [];
  channel.postMessage({ type: 'done', id: data.id, log: taken, shapes: [...shapes] });
};
