// AWS's billing rules as pure functions: DynamoDB item sizes and request units (GSI entries included), SQS's
// 64 KB request chunks, Lambda's GB-seconds. The meter prices every recorded call with these; the unit test
// recomputes a few by hand, so a wrong rule here fails a test instead of skewing every figure.

/** An item as DynamoDB's wire format (and dynalite's store) holds it: attribute name → AttributeValue. */
export type WireItem = Readonly<Record<string, WireValue>>;
export type WireValue = Readonly<
  Partial<Record<'S' | 'N' | 'B' | 'BOOL' | 'NULL' | 'SS' | 'NS' | 'BS' | 'M' | 'L', unknown>>
>;

/** Bytes of a number: about one byte per two significant digits, plus one (DynamoDB Developer Guide, "item sizes"). */
export function numberBytes(n: string): number {
  const digits = n.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

/** Bytes of one attribute value by DynamoDB's item size rules. */
export function valueBytes(value: WireValue): number {
  if (typeof value.S === 'string') return Buffer.byteLength(value.S, 'utf8');
  if (typeof value.N === 'string') return numberBytes(value.N);
  if (value.B !== undefined) return binaryBytes(value.B);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (Array.isArray(value.SS))
    return value.SS.reduce((sum: number, s: string) => sum + Buffer.byteLength(s, 'utf8'), 0);
  if (Array.isArray(value.NS)) return value.NS.reduce((sum: number, n: string) => sum + numberBytes(n), 0);
  if (Array.isArray(value.BS)) return value.BS.reduce((sum: number, b: unknown) => sum + binaryBytes(b), 0);
  // A list or map: 3 bytes of overhead, and 1 byte per element (a map's element names count as names do).
  if (Array.isArray(value.L)) return 3 + value.L.reduce((sum: number, v: WireValue) => sum + 1 + valueBytes(v), 0);
  if (value.M && typeof value.M === 'object') return 3 + itemBytes(value.M as WireItem) + Object.keys(value.M).length;
  throw new Error(`not an AttributeValue: ${JSON.stringify(value).slice(0, 80)}`);
}

function binaryBytes(b: unknown): number {
  if (typeof b === 'string') return Buffer.from(b, 'base64').length; // the wire format's base64
  if (b instanceof Uint8Array) return b.byteLength;
  throw new Error('binary attribute of unknown shape');
}

/** An item's size: the UTF-8 bytes of every attribute name plus its value's bytes. */
export function itemBytes(item: WireItem): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name, 'utf8') + valueBytes(value);
  return bytes;
}

/** Write request units for a write of `bytes`: one per started KB, at least one. */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}

/**
 * Read request units for `bytes` read in one request (a GetItem's item, or the summed items a Query page
 * reads): one per started 4 KB when strongly consistent, half that when eventually consistent.
 */
export function readUnits(bytes: number, consistent: boolean): number {
  const units = Math.max(1, Math.ceil(bytes / 4096));
  return consistent ? units : units / 2;
}

/** What an index projects, with the table's and the index's key attribute names. */
export interface IndexShape {
  readonly name: string;
  readonly keys: readonly string[];
  readonly tableKeys: readonly string[];
  readonly projection:
    | { readonly type: 'ALL' }
    | { readonly type: 'KEYS_ONLY' }
    | { readonly type: 'INCLUDE'; readonly attributes: readonly string[] };
}

/** The index entry of `item`, or null when the item lacks an index key attribute (a sparse index skips it). */
export function indexEntry(item: WireItem | undefined, index: IndexShape): WireItem | null {
  if (!item || !index.keys.every((k) => item[k] !== undefined)) return null;
  if (index.projection.type === 'ALL') return item;
  const kept = new Set([...index.tableKeys, ...index.keys]);
  if (index.projection.type === 'INCLUDE') for (const a of index.projection.attributes) kept.add(a);
  return Object.fromEntries(Object.entries(item).filter(([name]) => kept.has(name)));
}

export interface IndexWrite {
  readonly kind: 'put' | 'delete' | 'update';
  /** The index's partition key value of the entry written. */
  readonly partition: string;
  readonly units: number;
}

/**
 * The index writes one table write causes (Developer Guide, "Provisioned throughput considerations for global
 * secondary indexes"): an entry that appears is a put, one that disappears a delete, a changed index key
 * both; the same key with another projected attribute changed is one update; nothing projected changed, no
 * write. Each costs one unit per started KB of the entry it writes (the old entry for a delete).
 */
export function indexWrites(
  before: WireItem | undefined,
  after: WireItem | undefined,
  index: IndexShape,
): IndexWrite[] {
  const oldEntry = indexEntry(before, index);
  const newEntry = indexEntry(after, index);
  const keyOf = (entry: WireItem | null) => (entry ? JSON.stringify(index.keys.map((k) => entry[k])) : null);
  const partition = (entry: WireItem) => scalar(entry[index.keys[0] as string] as WireValue);
  const writes: IndexWrite[] = [];
  if (oldEntry && keyOf(oldEntry) !== keyOf(newEntry)) {
    writes.push({ kind: 'delete', partition: partition(oldEntry), units: writeUnits(itemBytes(oldEntry)) });
  }
  if (newEntry && keyOf(oldEntry) !== keyOf(newEntry)) {
    writes.push({ kind: 'put', partition: partition(newEntry), units: writeUnits(itemBytes(newEntry)) });
  } else if (newEntry && oldEntry && JSON.stringify(oldEntry) !== JSON.stringify(newEntry)) {
    writes.push({ kind: 'update', partition: partition(newEntry), units: writeUnits(itemBytes(newEntry)) });
  }
  return writes;
}

/** A key attribute's value as text (keys are S, N or B). */
export function scalar(value: WireValue | undefined): string {
  if (!value) return '?';
  const v = value.S ?? value.N ?? value.B;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Billed SQS requests for one request whose payload is `bytes`: every started 64 KB chunk is one. */
export function sqsRequests(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / (64 * 1024)));
}

/** GB-seconds of one invocation: duration rounded up to the millisecond, times the configured memory in GB. */
export function gbSeconds(memoryMb: number, durationMs: number): number {
  return (memoryMb / 1024) * (Math.ceil(durationMs) / 1000);
}

/**
 * What one capacity unit consumed costs in provisioned mode: auto scaling keeps consumption near `utilization` of
 * what is provisioned, so a steady rate of one unit a second holds 1 / utilization units provisioned, each billed
 * by the hour (`pricePerUnitHour`). One WCU (RCU) provisioned for an hour serves 3,600 write (read) units.
 */
export function provisionedUnitCost(pricePerUnitHour: number, utilization: number): number {
  if (!(utilization > 0 && utilization <= 1)) throw new Error(`utilization must be in (0, 1], got ${utilization}`);
  return pricePerUnitHour / 3600 / utilization;
}
