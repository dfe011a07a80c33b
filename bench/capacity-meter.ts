// Bills every DynamoDB call made through a client by AWS's rules (bench/dynamo-capacity.ts), per table: a write
// by the larger of the item before and after (read aside, through another client, so the meter never counts
// itself), each GSI entry it adds, changes or removes (100 bytes of overhead each), a failed conditional write as
// a write; a read by the whole items it touches (a projection does not make it cheaper), a Query by their sum.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type IndexSpec, type TableName, type TableSpec, tables } from '../lambdas/manifest';
import { itemBytes, readUnits, writeUnits } from './dynamo-capacity';

type Item = Record<string, unknown>;
export interface TableUnits {
  wru: number;
  rru: number;
  writes: number;
  reads: number;
}

const ATTRIBUTE_TYPES = ['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL'];
const isAttributeValue = (value: unknown) =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.keys(value).length === 1 &&
  ATTRIBUTE_TYPES.includes(Object.keys(value)[0] as string);
/** A record as plain values, whether the command carries it marshalled or not. */
const plain = (record: unknown): Item => {
  const values = Object.values((record ?? {}) as Item);
  return values.length && values.every(isAttributeValue)
    ? unmarshall(record as never, { wrapNumbers: false })
    : ((record ?? {}) as Item);
};

/** GSI entries are billed as the projected attributes plus 100 bytes. */
const INDEX_OVERHEAD = 100;

function projected(spec: TableSpec, index: IndexSpec, item: Item): Item | null {
  if (item[index.partitionKey] === undefined || (index.sortKey && item[index.sortKey] === undefined)) return null;
  const type = index.projection?.type ?? 'ALL';
  if (type === 'ALL') return item;
  const names = [spec.partitionKey, spec.sortKey, index.partitionKey, index.sortKey].filter(Boolean) as string[];
  if (index.projection?.type === 'INCLUDE') names.push(...index.projection.attributes);
  return Object.fromEntries(names.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]));
}

/** Write units the table's indexes take when an item goes from `before` to `after` (null: absent). */
function indexUnits(spec: TableSpec, before: Item | null, after: Item | null): number {
  let units = 0;
  for (const index of spec.indexes ?? []) {
    const old = before && projected(spec, index, before);
    const now = after && projected(spec, index, after);
    const size = (entry: Item) => writeUnits(itemBytes(entry) + INDEX_OVERHEAD);
    if (old && now) {
      const sameKeys =
        old[index.partitionKey] === now[index.partitionKey] &&
        (!index.sortKey || old[index.sortKey] === now[index.sortKey]);
      if (!sameKeys) units += size(old) + size(now);
      else if (JSON.stringify(old) !== JSON.stringify(now)) units += size(now);
    } else if (now) units += size(now);
    else if (old) units += size(old);
  }
  return units;
}

export class CapacityMeter {
  private units = new Map<TableName, TableUnits>();
  private readonly byPhysical: Map<string, TableName>;
  /** Reads items aside (set once the store is up); until then nothing is billed. */
  reader: DynamoDBDocumentClient | undefined;

  constructor(physical: Readonly<Record<TableName, string>>) {
    this.byPhysical = new Map(Object.entries(physical).map(([table, name]) => [name, table as TableName]));
  }

  attach(client: Pick<DynamoDBClient, 'middlewareStack'>): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (!this.reader) return next(args);
        const op = String(context.commandName).replace(/Command$/, '');
        const input = args.input as Item;
        if (op === 'PutItem' || op === 'UpdateItem' || op === 'DeleteItem') {
          const table = String(input.TableName);
          const key = this.keyOf(table, plain(op === 'PutItem' ? input.Item : input.Key));
          return this.write(table, [key], () => next(args));
        }
        if (op === 'BatchWriteItem') {
          const keys = Object.entries(input.RequestItems as Record<string, Item[]>).flatMap(([table, requests]) =>
            requests.map((request) => {
              const put = request.PutRequest as { Item: unknown } | undefined;
              const del = request.DeleteRequest as { Key: unknown } | undefined;
              return { table, key: this.keyOf(table, plain(put ? put.Item : del?.Key)) };
            }),
          );
          const befores = await Promise.all(keys.map(({ table, key }) => this.read(table, key)));
          const result = await next(args);
          const afters = await Promise.all(keys.map(({ table, key }) => this.read(table, key)));
          for (const [i, { table }] of keys.entries()) this.billWrite(table, befores[i] ?? null, afters[i] ?? null);
          return result;
        }
        const result = await next(args);
        const output = result.output as unknown as Item;
        const consistent = input.ConsistentRead === true;
        if (op === 'GetItem') {
          const table = String(input.TableName);
          const item = output.Item ? await this.read(table, this.keyOf(table, plain(output.Item))) : null;
          this.billRead(table, item ? itemBytes(item) : 0, consistent);
        }
        if (op === 'BatchGetItem') {
          for (const [table, items] of Object.entries((output.Responses ?? {}) as Record<string, unknown[]>)) {
            for (const raw of items) {
              const item = await this.read(table, this.keyOf(table, plain(raw)));
              this.billRead(table, item ? itemBytes(item) : 0, false);
            }
          }
        }
        if (op === 'Query' || op === 'Scan') {
          const table = String(input.TableName);
          const bytes = ((output.Items ?? []) as unknown[]).reduce(
            (sum: number, raw) =>
              sum + itemBytes(plain(raw)) + (input.IndexName && op === 'Query' ? INDEX_OVERHEAD : 0),
            0,
          );
          this.billRead(table, bytes, consistent);
        }
        return result;
      },
      { step: 'initialize', name: 'capacityMeter' },
    );
  }

  /** Units per manifest table since the start or the last reset. */
  snapshot(): Readonly<Record<string, TableUnits>> {
    return Object.fromEntries([...this.units].map(([table, units]) => [table, { ...units }]));
  }

  reset(): void {
    this.units = new Map();
  }

  private async write(table: string, keys: Item[], run: () => Promise<unknown>): Promise<never> {
    const [key] = keys;
    const before = await this.read(table, key as Item);
    try {
      const result = await run();
      this.billWrite(table, before, await this.read(table, key as Item));
      return result as never;
    } catch (error) {
      // A failed condition is billed as a write of the item as it is.
      this.billWrite(table, before, before);
      throw error;
    }
  }

  private keyOf(physical: string, item: Item): Item {
    const spec = tables[this.byPhysical.get(physical) as TableName] as TableSpec;
    const names = [spec.partitionKey, spec.sortKey].filter(Boolean) as string[];
    return Object.fromEntries(names.map((name) => [name, item[name]]));
  }

  private async read(physical: string, key: Item): Promise<Item | null> {
    const { Item } = await (this.reader as DynamoDBDocumentClient).send(
      new GetCommand({ TableName: physical, Key: key, ConsistentRead: true }),
    );
    return Item ?? null;
  }

  private entry(physical: string): TableUnits {
    const table = this.byPhysical.get(physical) as TableName;
    const units = this.units.get(table) ?? { wru: 0, rru: 0, writes: 0, reads: 0 };
    this.units.set(table, units);
    return units;
  }

  private billWrite(physical: string, before: Item | null, after: Item | null): void {
    const spec = tables[this.byPhysical.get(physical) as TableName] as TableSpec;
    const units = this.entry(physical);
    const size = Math.max(before ? itemBytes(before) : 0, after ? itemBytes(after) : 0);
    units.wru += writeUnits(size) + indexUnits(spec, before, after);
    units.writes += 1;
  }

  private billRead(physical: string, bytes: number, consistent: boolean): void {
    const units = this.entry(physical);
    units.rru += readUnits(bytes, consistent);
    units.reads += 1;
  }
}
