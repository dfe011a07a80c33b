// Loaded by bench:delivery into the embedded DynamoDB's thread (startLocalRuntime's `dynamoPreload`), before
// dynalite starts. dynalite reports no write units for global secondary indexes, so this wraps its index
// maintenance (`db.updateIndexes`, which every successful Put, Update and Delete calls with the old and the
// new item) and prices each change by DynamoDB's GSI rules. It also records the size of every item written.
// The bench's main thread drives it over a BroadcastChannel: enable, disable, reset, snapshot.
//
// Plain JavaScript, as dynalite-thread.mjs: it runs where the parent's TypeScript loader may not.
import { createRequire } from 'node:module';

export const CHANNEL = 'sendflow-bench-index-meter';

const db = createRequire(import.meta.url)('dynalite/db');
if (typeof db.updateIndexes !== 'function' || typeof db.itemSize !== 'function') {
  throw new Error('dynalite/db has no updateIndexes/itemSize: index write units cannot be counted');
}

let enabled = false;
/** `table index kind` (kind: put, delete, update) → write units. */
const indexWrites = new Map();
/** table → sizes of the items written (bytes, by DynamoDB's item size rules as dynalite applies them). */
const itemBytes = new Map();

const original = db.updateIndexes;
db.updateIndexes = (store, table, oldItem, newItem, cb) => {
  if (enabled) {
    if (newItem) {
      if (!itemBytes.has(table.TableName)) itemBytes.set(table.TableName, []);
      itemBytes.get(table.TableName).push(db.itemSize(newItem));
    }
    for (const [key, units] of indexWriteUnits(table, oldItem, newItem)) {
      indexWrites.set(key, (indexWrites.get(key) ?? 0) + units);
    }
  }
  return original(store, table, oldItem, newItem, cb);
};

/**
 * Write units on each GSI for one table write: an item entering an index is one put, one leaving it is one
 * delete, a changed index key is both, and a rewrite that keeps the key but changes a projected attribute is
 * one update (a change to an attribute the index does not project costs the index nothing). Each is sized in
 * 1 KB units of the index entry: the projected attributes (ALL: the item; KEYS_ONLY: the table's and the
 * index's keys; INCLUDE: those and the named attributes).
 */
function indexWriteUnits(table, oldItem, newItem) {
  const tableKeys = table.KeySchema.map((k) => k.AttributeName);
  const result = [];
  for (const index of table.GlobalSecondaryIndexes ?? []) {
    const names = index.KeySchema.map((k) => k.AttributeName);
    const entry = projector(index, tableKeys);
    const kb = (item) => Math.max(1, Math.ceil(db.itemSize(entry(item)) / 1024));
    const keyOf = (item) =>
      item && names.every((n) => item[n] !== undefined) ? JSON.stringify(names.map((n) => item[n])) : null;
    const before = keyOf(oldItem);
    const after = keyOf(newItem);
    const label = `${table.TableName} ${index.IndexName}`;
    if (before !== null && after !== before) result.push([`${label} delete`, kb(oldItem)]);
    if (after !== null && after !== before) result.push([`${label} put`, kb(newItem)]);
    if (before !== null && after === before && JSON.stringify(entry(oldItem)) !== JSON.stringify(entry(newItem))) {
      result.push([`${label} update`, kb(newItem)]);
    }
  }
  return result;
}

/** The index entry of an item: the attributes the index projects, in a fixed order. */
function projector(index, tableKeys) {
  const { ProjectionType, NonKeyAttributes = [] } = index.Projection ?? { ProjectionType: 'ALL' };
  if (ProjectionType === 'ALL') return (item) => item;
  const kept = [...new Set([...tableKeys, ...index.KeySchema.map((k) => k.AttributeName), ...NonKeyAttributes])];
  return (item) =>
    Object.fromEntries(kept.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]));
}

const channel = new BroadcastChannel(CHANNEL);
channel.onmessage = ({ data }) => {
  if (data.type === 'enable' || data.type === 'disable') enabled = data.type === 'enable';
  if (data.type === 'reset') {
    indexWrites.clear();
    itemBytes.clear();
  }
  channel.postMessage({ type: 'done', id: data.id, indexWrites: [...indexWrites], itemBytes: [...itemBytes] });
};
