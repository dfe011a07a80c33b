// Delivery figures in DynamoDB, in the deliveries table: one small item per webhook, hour and shard, under its own
// partition key (`fig#<webhookId>#<n>`, sort key the hour `YYYY-MM-DDTHH`): never one of a webhook's delivery
// partitions, so no log read, listing or claim meets it, and a release that predates it never reads it (a new
// item type: rollback-safe by construction). Each attempt is one ADD-only UpdateItem (about 0.5 KB: one write
// unit) of its counters, or of a worker's attempts of a second added up (app/webhooks/figure-tally); the item expires FIGURE_RETENTION_SECONDS after its hour ends (TTL `expiresAt`, and
// reads ignore nothing: an expired hour is outside every window read).
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { DeliveryFigureStore } from '../../app/webhooks/delivery-figures';
import {
  emptyHour,
  expiryOf,
  FIGURE_OUTCOMES,
  type HourFigures,
  LATENCY_BUCKETS,
} from '../../domain/webhooks/delivery-figures';
import { ERROR_CLASSES, type ErrorClass } from '../../domain/webhooks/error-class';
import { queryAll } from './operations';
import { shardOf } from './shards';

/** Every figure item's partition key starts so. */
export const FIGURE_PREFIX = 'fig#';

/**
 * Partition keys per webhook: one webhook at 2,000 attempts a second (one write unit each) puts 250 WCU/s on each,
 * half of the target of half DynamoDB's 1,000 per key (as DELIVERY_SHARDS). A window's read is one Query per shard.
 */
export const FIGURE_SHARDS = 8;

export const figurePartitionsOf = (webhookId: string) =>
  Array.from({ length: FIGURE_SHARDS }, (_, n) => `${FIGURE_PREFIX}${webhookId}#${n}`);

const count = z.number().int().nonnegative().optional();
const figureItem = z.looseObject({
  id: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}$/),
  succeeded: count,
  retrying: count,
  failed: count,
  ...Object.fromEntries(ERROR_CLASSES.map((name) => [`err_${name}`, count])),
  ...Object.fromEntries(Array.from({ length: LATENCY_BUCKETS }, (_, i) => [`lat_${i}`, count])),
});

export class DynamoDeliveryFigures implements DeliveryFigureStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async add(webhookId: string, hour: string, figures: HourFigures, spread: string): Promise<void> {
    const counters = countersOf(figures);
    if (!counters.length) return;
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { webhookId: `${FIGURE_PREFIX}${webhookId}#${shardOf(spread, FIGURE_SHARDS)}`, id: hour },
        UpdateExpression: `ADD ${counters.map((_, i) => `#c${i} :n${i}`).join(', ')} SET expiresAt = :expires`,
        ExpressionAttributeNames: Object.fromEntries(counters.map(([name], i) => [`#c${i}`, name])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(counters.map(([, n], i) => [`:n${i}`, n])),
          ':expires': expiryOf(hour),
        },
      }),
    );
  }

  async read(webhookId: string, from: string, to: string): Promise<HourFigures[]> {
    const shards = await Promise.all(
      figurePartitionsOf(webhookId).map((partition) =>
        queryAll(this.doc, {
          TableName: this.tableName,
          KeyConditionExpression: 'webhookId = :pk AND id BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': partition, ':from': from, ':to': to },
        }),
      ),
    );
    return shards.flat().map((raw) => figuresOf(figureItem.parse(raw)));
  }
}

/** The stored counters of some figures, the ones above zero: `[attribute, count]`. */
function countersOf(f: HourFigures): [string, number][] {
  const all: [string, number][] = [
    ...FIGURE_OUTCOMES.map((outcome): [string, number] => [outcome, f[outcome]]),
    ...ERROR_CLASSES.map((name): [string, number] => [`err_${name}`, f.errors[name] ?? 0]),
    ...f.latency.map((n, i): [string, number] => [`lat_${i}`, n]),
  ];
  return all.filter(([, n]) => n > 0);
}

function figuresOf(item: z.infer<typeof figureItem>): HourFigures {
  const n = (name: string) => (item[name] as number | undefined) ?? 0;
  const errors: Partial<Record<ErrorClass, number>> = {};
  for (const name of ERROR_CLASSES) if (n(`err_${name}`)) errors[name] = n(`err_${name}`);
  const [succeeded, retrying, failed] = FIGURE_OUTCOMES.map(n) as [number, number, number];
  return {
    ...emptyHour(item.id),
    succeeded,
    retrying,
    failed,
    errors,
    latency: Array.from({ length: LATENCY_BUCKETS }, (_, i) => n(`lat_${i}`)),
  };
}
