// Webhook endpoints in DynamoDB: partitioned by tenant (account + mode), so one Query is the dispatcher's
// whole fan-out lookup and another tenant's ids are simply not found.
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Tenant, Webhook, WebhookChanges, WebhookRef, WebhookRepository } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { ConflictError } from '../../domain/errors';
import { isEventType } from '../../domain/events';
import { DISABLED_REASONS } from '../../domain/webhooks/auto-disable';
import type { WebhookFilter } from '../../domain/webhooks/filter';
import { FORMATS } from '../../domain/webhooks/format';
import { ORDERINGS } from '../../domain/webhooks/ordering';
import type { StoredSecrets } from '../../domain/webhooks/secret-set';
import { STORED_URL_PREFIX } from '../../domain/webhooks/transformation';
import { unlessConditionFails } from './operations';
import { TenantTable } from './tenant-table';

export const webhookItem = z
  .object({
    id: z.string(),
    accountId: z.string(),
    mode: z.enum(MODES),
    url: z.string(),
    // Tolerant of types a later release added (expand/contract): after a rollback they are dropped on read, so the
    // webhook keeps getting the types this release knows instead of failing every read of its tenant's webhooks.
    events: z.array(z.string()).transform((names) => names.filter(isEventType)),
    format: z.enum(FORMATS),
    description: z.string().optional(),
    secret: z.string(),
    previousSecret: z.string().optional(),
    previousSecretExpiresAt: z.string().optional(),
    // Optional on read: webhooks not rotated since it was added have none (and the previous release ignores it).
    secretSet: z
      .object({
        current: z.string(),
        previous: z.array(z.object({ secret: z.string(), expiresAt: z.string() })),
      })
      .optional(),
    active: z.boolean(),
    rateLimitPerSecond: z.number().int().nullable().optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
    ordering: z.enum(ORDERINGS).optional(),
    disabledReason: z.enum(DISABLED_REASONS).nullable().optional(),
    disabledAt: z.string().nullable().optional(),
    failingSince: z.number().nullable().optional(),
    failedDeliveries: z.number().nullable().optional(),
    failingNotifiedAt: z.number().nullable().optional(),
    // The payload filter as its JSON text (validated before it is written); null or absent: none. A release before
    // it strips the attribute on read (and delivers every subscribed event: docs/deploy-and-operate.md).
    filter: z.string().nullable().optional().transform(decodeFilter),
    // An AWS destination (domain/webhooks/destination.ts); absent: HTTP to `url`. A release before it strips the
    // attribute on read and sends to `url`, which then holds a scheme its sender refuses (storedUrlOf).
    destination: z
      .discriminatedUnion('type', [
        z.object({
          type: z.literal('aws_eventbridge'),
          eventBusArn: z.string(),
          roleArn: z.string(),
          externalId: z.string(),
        }),
        z.object({ type: z.literal('aws_sqs'), queueUrl: z.string(), roleArn: z.string(), externalId: z.string() }),
      ])
      .optional(),
    // The transformation's source (validated before it is written); null or absent: none. While a webhook has one
    // its `url` is stored behind STORED_URL_PREFIX, so a release before transformations refuses to send to it (a
    // visible `blocked_address` failure) instead of sending the untransformed body; read back without the prefix.
    transformation: z.string().nullable().optional(),
  })
  .transform(({ url, ...rest }) => ({
    ...rest,
    url: url.startsWith(STORED_URL_PREFIX) ? url.slice(STORED_URL_PREFIX.length) : url,
  }));

/** The stored text of a filter, parsed; a text that is no JSON object fails the read, as any malformed item does. */
function decodeFilter(text: string | null | undefined, ctx: z.RefinementCtx): WebhookFilter | null | undefined {
  if (text === null || text === undefined) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as WebhookFilter;
  } catch {}
  ctx.addIssue({ code: 'custom', message: 'filter is not the JSON text of an object' });
  return z.NEVER;
}

/**
 * The attributes a webhook (or changes to one) are stored as: the filter as its JSON text, none when empty; the
 * URL behind STORED_URL_PREFIX while there is a transformation. Changes that set `url` or `transformation` carry
 * both (app/webhooks/manage-webhooks.ts), so the stored URL always says whether the webhook transforms.
 */
function encode<
  T extends { readonly filter?: WebhookFilter | null; readonly url?: string; readonly transformation?: string | null },
>(webhook: T): Omit<T, 'filter'> & { filter?: string | null } {
  const { filter, ...rest } = webhook;
  const url = rest.url !== undefined && rest.transformation ? { url: `${STORED_URL_PREFIX}${rest.url}` } : {};
  if (filter === undefined) return { ...rest, ...url };
  return {
    ...rest,
    ...url,
    filter: filter === null || Object.keys(filter).length === 0 ? null : JSON.stringify(filter),
  };
}

export class DynamoWebhookRepository implements WebhookRepository {
  private readonly table: TenantTable<Webhook>;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.table = new TenantTable(doc, tableName, (item) => webhookItem.parse(item));
  }

  async create(webhook: Webhook): Promise<void> {
    const { filter, transformation, ...item } = encode(webhook);
    // A webhook made without a filter (or a transformation) has no attribute at all, as every webhook made before.
    const stored: typeof item & { filter?: string; transformation?: string } = {
      ...item,
      ...(filter ? { filter } : {}),
      ...(transformation ? { transformation } : {}),
    };
    if (!(await this.table.create(stored))) throw new ConflictError(`Webhook ${webhook.id} exists.`);
  }

  get(tenant: Tenant, id: string, options: { readonly consistent?: boolean } = {}): Promise<Webhook | null> {
    return this.table.get(tenant, id, options);
  }

  getMany(refs: readonly WebhookRef[]): Promise<Webhook[]> {
    return this.table.getMany(refs);
  }

  list(tenant: Tenant): Promise<Webhook[]> {
    return this.table.list(tenant);
  }

  update(tenant: Tenant, id: string, changes: WebhookChanges, updatedAt: string): Promise<Webhook | null> {
    return this.write(tenant, id, changes, updatedAt);
  }

  replaceSecrets(
    tenant: Tenant,
    id: string,
    expected: string,
    secrets: StoredSecrets,
    updatedAt: string,
  ): Promise<Webhook | null> {
    return this.write(tenant, id, secrets, updatedAt, expected);
  }

  /** SETs `changes` (ALL_NEW); with `expectedSecret`, only while `secret` is still that one. */
  private async write(
    tenant: Tenant,
    id: string,
    changes: WebhookChanges,
    updatedAt: string,
    expectedSecret?: string,
  ): Promise<Webhook | null> {
    const entries = [...Object.entries(encode(changes)).filter(([, v]) => v !== undefined), ['updatedAt', updatedAt]];
    const guard = expectedSecret === undefined ? {} : { ':expected': expectedSecret };
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.table.key(tenant, id),
          UpdateExpression: `SET ${entries.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: {
            ...Object.fromEntries(entries.map(([name], i) => [`#f${i}`, name as string])),
            ...(expectedSecret === undefined ? {} : { '#secret': 'secret' }),
          },
          ExpressionAttributeValues: {
            ...Object.fromEntries(entries.map(([, value], i) => [`:v${i}`, value])),
            ...guard,
          },
          ConditionExpression:
            expectedSecret === undefined ? 'attribute_exists(id)' : 'attribute_exists(id) AND #secret = :expected',
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written === null) return null;
    return webhookItem.parse(written.Attributes);
  }

  delete(tenant: Tenant, id: string): Promise<boolean> {
    return this.table.delete(tenant, id);
  }
}
