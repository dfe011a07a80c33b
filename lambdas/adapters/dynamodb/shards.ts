// Shard numbers for sparse indexes whose entries would otherwise share one partition key value: one key
// value of a GSI takes about 1,000 writes a second, and a throttled index throttles the table's writes.
/** A stable shard in [0, count) for `key` (32-bit FNV-1a: cheap, evenly spread, the same in every process). */
export function shardOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}
