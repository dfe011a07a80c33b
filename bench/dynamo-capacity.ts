// DynamoDB's billing rules for one item, as AWS documents them: an item's size is the sum of its attribute names'
// and values' sizes (strings UTF-8 bytes, numbers about one byte per two digits plus one, binaries their length,
// lists and maps 3 bytes plus 1 per element plus their contents); a write costs 1 WRU per started KB of the larger
// of the item before and after, a read 1 RRU per started 4 KB strongly consistent, half that eventually consistent.

/** The item's size in bytes by DynamoDB's rule (plain JavaScript values, as the DocumentClient writes them). */
export function itemBytes(item: Readonly<Record<string, unknown>>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) {
    if (value === undefined) continue;
    bytes += Buffer.byteLength(name) + valueBytes(value);
  }
  return bytes;
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') {
    const digits = String(value)
      .replace(/^-|\.|e.*$/g, '')
      .replace(/^0+/, '').length;
    return Math.ceil(digits / 2) + 1;
  }
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce((sum: number, v) => sum + valueBytes(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((sum: number, v) => sum + 1 + valueBytes(v), 0);
  if (typeof value === 'object') {
    return (
      3 +
      Object.entries(value as Record<string, unknown>).reduce(
        (sum, [name, v]) => sum + 1 + Buffer.byteLength(name) + valueBytes(v),
        0,
      )
    );
  }
  return 0;
}

/** Write units of one write: 1 per started KB of the larger of the item before and after (at least 1). */
export const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** Read units of one item or query result: 1 per started 4 KB, half when eventually consistent. */
export const readUnits = (bytes: number, consistent: boolean) =>
  Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
