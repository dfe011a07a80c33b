// The transactional outbox in DynamoDB, one way for every table: the write that changes an item also ADDs the
// events it causes (JSON strings in a string set, `outbox`) and sparse keys of the table's outbox index (byOutboxEvents)
// (`outboxShard`, `outboxDue` = when the oldest waiting event was recorded). Relaying DELETEs exactly those
// strings; once the set is empty the index keys go, and a deleted item's tombstone goes with them.
// dynalite has no transactions and no streams, so one item is the unit of atomicity on AWS and locally alike.
import { DeleteCommand, type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Outbox, OutboxRef, PendingEvents } from '../../app/outbox';
import { MODES } from '../../domain/api-keys';
import type { SendflowEvent } from '../../domain/events';
import { unlessConditionFails } from './operations';
import { dueKey } from './shards';

/** The sparse index every table with an outbox declares (manifest). */
export const OUTBOX_INDEX = 'byOutboxEvents';
const SHARD = 'outbox';
/** A deleted item that still has events to relay stays as a tombstone with this attribute; reads skip it. */
export const TOMBSTONE = 'deletedAt';

/** Clauses of an UpdateItem, merged by `updateCommand` into one expression. */
export interface UpdateParts {
  readonly set?: readonly string[];
  readonly remove?: readonly string[];
  readonly add?: readonly string[];
  readonly delete?: readonly string[];
  readonly names?: Readonly<Record<string, string>>;
  readonly values?: Readonly<Record<string, unknown>>;
}

/** One UpdateExpression (with its names and values) from several parts. */
export function updateExpression(...parts: readonly UpdateParts[]): {
  UpdateExpression: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
} {
  const clause = (keyword: string, key: 'set' | 'remove' | 'add' | 'delete') => {
    const items = parts.flatMap((part) => part[key] ?? []);
    return items.length ? `${keyword} ${items.join(', ')}` : '';
  };
  const names = Object.assign({}, ...parts.map((part) => part.names ?? {}));
  const values = Object.assign({}, ...parts.map((part) => part.values ?? {}));
  return {
    UpdateExpression: [
      clause('SET', 'set'),
      clause('REMOVE', 'remove'),
      clause('ADD', 'add'),
      clause('DELETE', 'delete'),
    ]
      .filter(Boolean)
      .join(' '),
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}

const encode = (events: readonly SendflowEvent[]) => new Set(events.map((event) => JSON.stringify(event)));
/** When the events were recorded: the earliest of their timestamps (they are stamped by the use case's clock). */
const recordedAt = (events: readonly SendflowEvent[]) => Math.min(...events.map((e) => Date.parse(e.timestamp)));

/** The parts that record `events` in an UpdateItem (nothing when there are none). */
export function recordEvents(events: readonly SendflowEvent[]): UpdateParts {
  if (events.length === 0) return {};
  return {
    set: ['outboxShard = :outboxShard', 'outboxDue = if_not_exists(outboxDue, :outboxDue)'],
    add: ['outbox :outboxEvents'],
    values: { ':outboxShard': SHARD, ':outboxDue': dueKey(recordedAt(events)), ':outboxEvents': encode(events) },
  };
}

/** The attributes that record `events` in a new item's PutItem. */
export function outboxAttributes(events: readonly SendflowEvent[]): Record<string, unknown> {
  if (events.length === 0) return {};
  return { outbox: encode(events), outboxShard: SHARD, outboxDue: dueKey(recordedAt(events)) };
}

/**
 * The parts that write a new item's fields with UpdateItem rather than PutItem, so the outbox of a tombstone
 * it replaces (events of the deletion, not yet relayed) survives. Key attributes are left out (they are the
 * Key); `undefined` fields are skipped.
 */
export function setFields(fields: object, keyAttributes: readonly string[]): UpdateParts {
  const entries = Object.entries(fields).filter(
    ([name, value]) => value !== undefined && !keyAttributes.includes(name),
  );
  return {
    set: entries.map((_, i) => `#field${i} = :field${i}`),
    remove: [TOMBSTONE],
    names: Object.fromEntries(entries.map(([name], i) => [`#field${i}`, name])),
    values: Object.fromEntries(entries.map(([, value], i) => [`:field${i}`, value])),
  };
}

/** A create's condition: no such item, or only the tombstone of a deleted one. */
export const CREATE_CONDITION = `attribute_not_exists(id) OR attribute_exists(${TOMBSTONE})`;
/** An update's or delete's condition: a live item (not a tombstone). */
export const LIVE_CONDITION = `attribute_exists(id) AND attribute_not_exists(${TOMBSTONE})`;

/** The parts that turn an item into a tombstone (its outbox keeps it until relayed; see DynamoOutbox.clear). */
export function tombstone(at: string): UpdateParts {
  return { set: [`${TOMBSTONE} = :tombstoneAt`], values: { ':tombstoneAt': at } };
}

/** Whether a stored item is a deleted one waiting for its events to be relayed. */
export const isTombstone = (item: Record<string, unknown>) => item[TOMBSTONE] !== undefined;

const storedEvent = z
  .object({
    id: z.string(),
    type: z.string(),
    accountId: z.string(),
    mode: z.enum(MODES),
    timestamp: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .passthrough();

/**
 * A stored event, checked but kept as parsed: its JSON must re-encode to the very string stored, since that
 * string is what `clear` deletes from the set (zod's output would reorder the keys).
 */
function decode(encoded: string): SendflowEvent {
  const event = JSON.parse(encoded) as unknown;
  storedEvent.parse(event);
  return event as SendflowEvent;
}

export class DynamoOutbox implements Outbox {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    readonly name: string,
    /** The table's key attributes (partition, then sort). */
    private readonly keyAttributes: readonly string[],
    /** Whether the table deletes items through tombstones (see `tombstone`), which relaying then removes. */
    private readonly options: { readonly tombstones: boolean } = { tombstones: false },
  ) {}

  /** The outbox reference of an item with this key. */
  ref(key: Readonly<Record<string, string>>): OutboxRef {
    return Object.fromEntries(this.keyAttributes.map((name) => [name, String(key[name])]));
  }

  pending(key: Readonly<Record<string, string>>, events: readonly SendflowEvent[]): PendingEvents {
    return { ref: this.ref(key), events };
  }

  /**
   * One conditional UpdateItem of the item at `key`: `parts` change it and `events` go into its outbox in the
   * same write. The events to relay, or null when `condition` failed (nothing written).
   */
  async write(
    key: Readonly<Record<string, string>>,
    parts: readonly UpdateParts[],
    condition: string,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.name,
          Key: key,
          ...updateExpression(...parts, recordEvents(events)),
          ConditionExpression: condition,
        }),
      ),
    );
    return written === null ? null : this.pending(key, events);
  }

  async clear(pending: PendingEvents): Promise<void> {
    const Key = this.ref(pending.ref);
    let rest: Record<string, unknown> | undefined;
    if (pending.events.length) {
      const written = await unlessConditionFails(
        this.doc.send(
          new UpdateCommand({
            TableName: this.name,
            Key,
            UpdateExpression: 'DELETE outbox :events',
            ConditionExpression: 'attribute_exists(outbox)',
            ExpressionAttributeValues: { ':events': encode(pending.events) },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      rest = written?.Attributes;
      if (rest?.outbox) return;
    }
    // Nothing left to relay: the index keys go (a tombstone goes entirely). Conditional, so an event recorded
    // in between keeps them.
    const settled = 'attribute_not_exists(outbox)';
    if (this.options.tombstones && (rest === undefined || isTombstone(rest))) {
      await unlessConditionFails(
        this.doc.send(
          new DeleteCommand({
            TableName: this.name,
            Key,
            ConditionExpression: `${settled} AND attribute_exists(${TOMBSTONE})`,
          }),
        ),
      );
    }
    await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.name,
          Key,
          UpdateExpression: 'REMOVE outboxShard, outboxDue',
          ConditionExpression: `${settled} AND attribute_exists(outboxShard)`,
        }),
      ),
    );
  }

  async due(before: number, limit: number): Promise<PendingEvents[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.name,
        IndexName: OUTBOX_INDEX,
        KeyConditionExpression: 'outboxShard = :s AND outboxDue <= :before',
        ExpressionAttributeValues: { ':s': SHARD, ':before': dueKey(Math.min(before, 1e15 - 1)) },
        Limit: limit,
      }),
    );
    return (Items ?? []).map((item) => ({
      ref: this.ref(item as Record<string, string>),
      events: [...((item.outbox as Set<string> | undefined) ?? [])].map(decode),
    }));
  }
}
