// A webhook's failure streak and its disabling, on the webhook's own item (WebhookHealthStore): each change is one
// conditional UpdateItem, so concurrent workers count every failed delivery once, note the failing notice once
// and disable once. The API's resume stores nulls, which these conditions read as "no streak".
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Tenant, Webhook, WebhookHealthStore } from '../../app/webhooks/ports';
import type { DisabledReason, FailureStreak } from '../../domain/webhooks/auto-disable';
import { conditionHeld, unlessConditionFails } from './operations';
import { tenantKey } from './tenant-table';
import { webhookItem } from './webhooks';

const NO_STREAK = '(attribute_not_exists(failingSince) OR failingSince = :null)';

export class DynamoWebhookHealth implements WebhookHealthStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async countFailure(tenant: Tenant, id: string, at: number, streaking: boolean): Promise<FailureStreak | null> {
    // The write the caller's copy calls for first; the other when the item says otherwise. A streak started or
    // cleared by another worker between two writes flips the answer again, so they alternate, a few times at most
    // (all fail only for a missing webhook).
    const start = () => this.start(tenant, id, at);
    const add = () => this.add(tenant, id);
    for (const write of streaking ? [add, start, add, start] : [start, add, start, add]) {
      const written = await write();
      if (written) return streakOf(written);
    }
    return null;
  }

  async clearStreak(tenant: Tenant, id: string): Promise<void> {
    await conditionHeld(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'REMOVE failingSince, failedDeliveries, failingNotifiedAt',
          ConditionExpression: 'attribute_exists(failingSince) AND failingSince <> :null',
          ExpressionAttributeValues: { ':null': null },
        }),
      ),
    );
  }

  noteFailing(tenant: Tenant, id: string, since: number, at: number): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'SET failingNotifiedAt = :at',
          ConditionExpression:
            'failingSince = :since AND (attribute_not_exists(failingNotifiedAt) OR failingNotifiedAt = :null)',
          ExpressionAttributeValues: { ':at': at, ':since': since, ':null': null },
        }),
      ),
    );
  }

  async disable(
    tenant: Tenant,
    id: string,
    reason: DisabledReason,
    at: number,
    since?: number,
  ): Promise<Webhook | null> {
    const iso = new Date(at).toISOString();
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'SET active = :false, disabledReason = :reason, disabledAt = :at, updatedAt = :at',
          ConditionExpression: `active = :true${since === undefined ? '' : ' AND failingSince = :since'}`,
          ExpressionAttributeValues: {
            ':false': false,
            ':true': true,
            ':reason': reason,
            ':at': iso,
            ...(since === undefined ? {} : { ':since': since }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written ? webhookItem.parse(written.Attributes) : null;
  }

  /** Begins a streak with this failure: only where none is stored. */
  private async start(tenant: Tenant, id: string, at: number): Promise<Record<string, unknown> | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'SET failingSince = :at, failedDeliveries = :one REMOVE failingNotifiedAt',
          ConditionExpression: `attribute_exists(id) AND ${NO_STREAK}`,
          ExpressionAttributeValues: { ':at': at, ':one': 1, ':null': null },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written?.Attributes ?? null;
  }

  /** Counts one more failed delivery in the stored streak: only where one is. */
  private async add(tenant: Tenant, id: string): Promise<Record<string, unknown> | null> {
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'ADD failedDeliveries :one',
          ConditionExpression: 'attribute_exists(id) AND attribute_type(failingSince, :number)',
          ExpressionAttributeValues: { ':one': 1, ':number': 'N' },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return written?.Attributes ?? null;
  }

  private key(tenant: Tenant, id: string) {
    return { tenant: tenantKey(tenant), id };
  }
}

function streakOf(item: Record<string, unknown>): FailureStreak {
  const webhook = webhookItem.parse(item);
  return {
    since: webhook.failingSince ?? 0,
    failures: webhook.failedDeliveries ?? 0,
    failingNotified: typeof webhook.failingNotifiedAt === 'number',
  };
}
