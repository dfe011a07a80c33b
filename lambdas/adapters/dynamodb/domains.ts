// Sending domains in DynamoDB: by tenant, with a sparse index of pending ones for the reconciler. Every change
// that fires a domain.* event records it in the item's outbox with the same write (adapters/dynamodb/outbox).
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  CAPABILITY_STATES,
  DEFAULT_CAPABILITIES,
  type Domain,
  type DomainRepository,
  type DomainStatus,
} from '../../app/domains/ports';
import type { PendingEvents, Recorded } from '../../app/outbox';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import type { SendflowEvent } from '../../domain/events';
import { conditionHeld, unlessConditionFails } from './operations';
import {
  CREATE_CONDITION,
  DynamoOutbox,
  isTombstone,
  LIVE_CONDITION,
  recordEvents,
  setFields,
  tombstone,
  type UpdateParts,
  updateExpression,
} from './outbox';
import { TenantTable } from './tenant-table';

const STATUSES = ['pending', 'verified', 'failed'] as const;
const domainItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  name: z.string(),
  status: z.enum(STATUSES),
  records: z.array(
    z.object({
      type: z.enum(['CNAME', 'TXT', 'MX']),
      name: z.string(),
      value: z.string(),
      priority: z.number().int().optional(),
    }),
  ),
  // Domains stored before tracking was per domain have neither flag: off, as for a new one.
  openTracking: z.boolean().default(false),
  clickTracking: z.boolean().default(false),
  // Domains stored before capabilities have none: read as they behave (DEFAULT_CAPABILITIES).
  capabilities: z
    .object({ sending: z.enum(CAPABILITY_STATES), receiving: z.enum(CAPABILITY_STATES) })
    .default(DEFAULT_CAPABILITIES),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/**
 * The partition of live-mode name claims: one item per domain name, naming the account that holds it. (Claims
 * once covered test mode too, under `#names`; those items are ignored, so an old test-mode claim blocks nothing.)
 */
const NAME_CLAIMS = '#live-names';
const KEY = ['tenant', 'id'];

export class DynamoDomainRepository implements DomainRepository {
  private readonly table: TenantTable<Domain | null>;
  readonly outbox: DynamoOutbox;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.table = new TenantTable(doc, tableName, (item) => (isTombstone(item) ? null : domainItem.parse(item)));
    this.outbox = new DynamoOutbox(doc, tableName, KEY, { tombstones: true });
  }

  async create(domain: Domain, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const parts = [setFields(domain, KEY), pendingMark(domain.status)];
    return this.outbox.write(this.table.key(domain, domain.id), parts, CREATE_CONDITION, events);
  }

  get(tenant: Tenant, id: string): Promise<Domain | null> {
    return this.table.get(tenant, id);
  }

  async list(tenant: Tenant): Promise<Domain[]> {
    return (await this.table.list(tenant)).filter((domain): domain is Domain => domain !== null);
  }

  async setStatus(
    tenant: Tenant,
    id: string,
    change: { from: DomainStatus; to: DomainStatus; at: string },
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null> {
    return this.updateLive(
      tenant,
      id,
      [
        {
          set: ['#s = :to', 'updatedAt = :at'],
          names: { '#s': 'status' },
          values: { ':to': change.to, ':from': change.from, ':at': change.at },
        },
        pendingMark(change.to),
      ],
      events,
      '#s = :from',
    );
  }

  async setTracking(
    tenant: Tenant,
    id: string,
    tracking: Partial<Pick<Domain, 'openTracking' | 'clickTracking'>>,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null> {
    const flags = (['openTracking', 'clickTracking'] as const).filter((flag) => tracking[flag] !== undefined);
    const set = {
      set: ['updatedAt = :at', ...flags.map((flag) => `${flag} = :${flag}`)],
      values: { ':at': at, ...Object.fromEntries(flags.map((flag) => [`:${flag}`, tracking[flag]])) },
    };
    return this.updateLive(tenant, id, [set], events);
  }

  async setCapabilities(
    tenant: Tenant,
    id: string,
    change: Pick<Domain, 'capabilities' | 'records'>,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<Recorded<Domain> | null> {
    const set = {
      set: ['updatedAt = :at', 'capabilities = :capabilities', 'records = :records'],
      values: { ':at': at, ':capabilities': change.capabilities, ':records': change.records },
    };
    return this.updateLive(tenant, id, [set], events);
  }

  /** One conditional UpdateItem of a live domain (and `condition`, if given) with its events; null if it fails. */
  private async updateLive(
    tenant: Tenant,
    id: string,
    parts: readonly UpdateParts[],
    events: readonly SendflowEvent[],
    condition?: string,
  ): Promise<Recorded<Domain> | null> {
    const Key = this.table.key(tenant, id);
    const written = await unlessConditionFails(
      this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key,
          ...updateExpression(...parts, recordEvents(events)),
          ConditionExpression: condition ? `${condition} AND ${LIVE_CONDITION}` : LIVE_CONDITION,
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (written === null) return null;
    return { value: domainItem.parse(written.Attributes), pending: this.outbox.pending(Key, events) };
  }

  async delete(
    tenant: Tenant,
    id: string,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    const parts = [tombstone(at), { remove: ['pendingShard'] }];
    return this.outbox.write(this.table.key(tenant, id), parts, LIVE_CONDITION, events);
  }

  async claimName(name: string, accountId: string): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { tenant: NAME_CLAIMS, id: name, accountId },
          ConditionExpression: 'attribute_not_exists(id) OR accountId = :a',
          ExpressionAttributeValues: { ':a': accountId },
        }),
      ),
    );
  }

  async nameHolder(name: string): Promise<string | null> {
    // Strongly consistent: mail for a domain claimed a moment ago is not refused by a stale read.
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { tenant: NAME_CLAIMS, id: name }, ConsistentRead: true }),
    );
    return typeof Item?.accountId === 'string' ? Item.accountId : null;
  }

  async releaseName(name: string, accountId: string): Promise<void> {
    await unlessConditionFails(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { tenant: NAME_CLAIMS, id: name },
          ConditionExpression: 'accountId = :a',
          ExpressionAttributeValues: { ':a': accountId },
        }),
      ),
    );
  }

  async listPending(limit: number): Promise<Domain[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: 'byPending',
        KeyConditionExpression: 'pendingShard = :p',
        ExpressionAttributeValues: { ':p': 'pending' },
        Limit: limit,
      }),
    );
    return (Items ?? []).filter((item) => !isTombstone(item)).map((item) => domainItem.parse(item));
  }
}

/** A pending domain sits in the sparse byPending index; any other status leaves it. */
function pendingMark(status: DomainStatus) {
  return status === 'pending'
    ? { set: ['pendingShard = :pendingShard'], values: { ':pendingShard': 'pending' } }
    : { remove: ['pendingShard'] };
}
