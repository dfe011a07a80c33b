// Contacts in DynamoDB, by tenant; the id is derived from the address, so a second create collides. Every
// change that fires a contact.* event records it in the item's outbox with the same write. An event carries
// the contact as it is after the change, so changes are read, applied and written back on a revision number
// (optimistic concurrency: the event and the stored contact cannot disagree).
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type { Contact, ContactChanges, ContactRepository } from '../../app/contacts/contacts';
import type { PendingEvents, Recorded } from '../../app/outbox';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { ConflictError } from '../../domain/errors';
import type { SendflowEvent } from '../../domain/events';
import { conditionHeld } from './operations';
import {
  CREATE_CONDITION,
  DynamoOutbox,
  isTombstone,
  LIVE_CONDITION,
  recordEvents,
  setFields,
  tombstone,
  updateExpression,
} from './outbox';
import { TenantTable } from './tenant-table';

const contactItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  email: z.string(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  status: z.enum(['pending', 'subscribed']),
  createdAt: z.string(),
  updatedAt: z.string(),
  subscribedAt: z.string().optional(),
});

const KEY = ['tenant', 'id'];
const OPTIONAL = ['firstName', 'lastName', 'subscribedAt'] as const;
/** Read-apply-write rounds before giving up on a contact that keeps changing under us. */
const ROUNDS = 5;

export class DynamoContactRepository implements ContactRepository {
  private readonly table: TenantTable<Contact | null>;
  readonly outbox: DynamoOutbox;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.table = new TenantTable(doc, tableName, (item) => (isTombstone(item) ? null : contactItem.parse(item)));
    this.outbox = new DynamoOutbox(doc, tableName, KEY, { tombstones: true });
  }

  async create(contact: Contact, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const absent = OPTIONAL.filter((field) => contact[field] === undefined);
    const parts = [setFields({ ...contact, rev: 1 }, KEY), { remove: absent }];
    return this.outbox.write(this.table.key(contact, contact.id), parts, CREATE_CONDITION, events);
  }

  get(tenant: Tenant, id: string): Promise<Contact | null> {
    return this.table.get(tenant, id);
  }

  async list(tenant: Tenant): Promise<Contact[]> {
    return (await this.table.list(tenant)).filter((contact): contact is Contact => contact !== null);
  }

  update(
    tenant: Tenant,
    id: string,
    changes: ContactChanges,
    at: string,
    announce: (updated: Contact) => SendflowEvent[],
  ): Promise<Recorded<Contact> | null> {
    return this.change(tenant, id, announce, (current) => {
      const next: Record<string, unknown> = { ...current, updatedAt: at };
      for (const field of ['firstName', 'lastName'] as const) {
        const value = changes[field];
        if (value === null) delete next[field];
        else if (value !== undefined) next[field] = value;
      }
      return next as unknown as Contact;
    });
  }

  subscribe(
    tenant: Tenant,
    id: string,
    at: string,
    announce: (subscribed: Contact) => SendflowEvent[],
  ): Promise<Recorded<Contact> | null> {
    return this.change(tenant, id, announce, (current) =>
      current.status === 'pending' ? { ...current, status: 'subscribed', subscribedAt: at, updatedAt: at } : null,
    );
  }

  async delete(
    tenant: Tenant,
    id: string,
    at: string,
    events: readonly SendflowEvent[],
  ): Promise<PendingEvents | null> {
    return this.outbox.write(this.table.key(tenant, id), [tombstone(at)], LIVE_CONDITION, events);
  }

  /**
   * Reads the contact, applies `apply` (null: nothing to change), and writes the result with its events only
   * if the contact is still the revision read; a concurrent change makes it read and apply again.
   */
  private async change(
    tenant: Tenant,
    id: string,
    announce: (next: Contact) => SendflowEvent[],
    apply: (current: Contact) => Contact | null,
  ): Promise<Recorded<Contact> | null> {
    const Key = this.table.key(tenant, id);
    for (let round = 0; round < ROUNDS; round++) {
      const { Item } = await this.doc.send(new GetCommand({ TableName: this.tableName, Key, ConsistentRead: true }));
      if (!Item || isTombstone(Item)) return null;
      const next = apply(contactItem.parse(Item));
      if (!next) return null;
      const events = announce(next);
      const rev = typeof Item.rev === 'number' ? Item.rev : 0;
      const absent = OPTIONAL.filter((field) => next[field] === undefined);
      const written = await conditionHeld(
        this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key,
            ...updateExpression(
              setFields({ ...next, rev: rev + 1 }, KEY),
              { remove: absent, values: { ...(rev ? { ':rev': rev } : {}), ':incarnation': Item.createdAt } },
              recordEvents(events),
            ),
            // The revision read, of the contact read: a contact deleted and created again meanwhile (its revisions
            // start over) is another contact, and the change is not applied to it.
            ConditionExpression: `${LIVE_CONDITION} AND ${rev === 0 ? 'attribute_not_exists(rev)' : 'rev = :rev'} AND createdAt = :incarnation`,
          }),
        ),
      );
      if (written) return { value: next, pending: this.outbox.pending(Key, events) };
    }
    // Others keep changing it: the client's to retry (409), not a server fault.
    throw new ConflictError(`Contact ${id} is being changed by other requests; try again.`, 'conflict');
  }
}
