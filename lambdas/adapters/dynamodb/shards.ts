// Keys of the sparse due-time indexes (deliveries, emails, outboxes): shard numbers, for entries that would
// otherwise share one partition key value (one key value of a GSI takes about 1,000 writes a second, and a
// throttled index throttles the table's writes), and the due-time sort key.

/** Zero-padded epoch ms: a string sort key that orders like the number. */
export const dueKey = (ms: number): string => String(Math.max(0, Math.floor(ms))).padStart(15, '0');

/** A stable shard in [0, count) for `key` (32-bit FNV-1a: cheap, evenly spread, the same in every process). */
export function shardOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}
