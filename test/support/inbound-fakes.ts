// In-memory fakes of inbound mail's ports: the received-email repository (it passes the same contract suite as
// the DynamoDB adapter) and a file store that keeps bytes in a map.
import type {
  InboundFiles,
  ReceivedEmail,
  ReceivedEmailRepository,
  ReceivedPage,
  ReceivedPageQuery,
} from '../../lambdas/app/inbound/ports';
import type { PendingEvents } from '../../lambdas/app/outbox';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import type { SendflowEvent } from '../../lambdas/domain/events';
import { InMemoryOutbox } from './fakes';

const tenantOf = (tenant: Tenant) => `${tenant.accountId}#${tenant.mode}`;

export class InMemoryReceivedEmailRepository implements ReceivedEmailRepository {
  /** Keyed by `account#mode#id`. */
  readonly items = new Map<string, ReceivedEmail>();
  readonly outbox = new InMemoryOutbox('inboundEmails');

  constructor(private readonly now: () => number = Date.now) {}

  async create(email: ReceivedEmail, events: readonly SendflowEvent[]): Promise<PendingEvents | null> {
    const key = `${tenantOf(email)}#${email.id}`;
    const stored = this.items.get(key);
    // A stored email is kept, unless it is a failed one and this one is not (a retried dead letter).
    if (stored && (stored.status !== 'failed' || email.status === 'failed')) return null;
    this.items.set(key, structuredClone(email));
    return this.outbox.record({ tenant: tenantOf(email), id: email.id }, events);
  }

  async get(tenant: Tenant, id: string): Promise<ReceivedEmail | null> {
    const email = this.items.get(`${tenantOf(tenant)}#${id}`);
    return email && this.live(email) ? structuredClone(email) : null;
  }

  async list(tenant: Tenant, query: ReceivedPageQuery): Promise<ReceivedPage> {
    const newestFirst = [...this.items.values()]
      .filter((email) => tenantOf(email) === tenantOf(tenant) && this.live(email))
      .sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const upwards = query.before !== undefined && query.after === undefined;
    if (upwards) {
      const newer = newestFirst.filter((email) => email.id > (query.before as string)).reverse();
      const page = newer.slice(0, query.limit);
      return { emails: page.reverse().map((e) => structuredClone(e)), hasMore: newer.length > query.limit };
    }
    const older = newestFirst.filter((email) => query.after === undefined || email.id < query.after);
    return {
      emails: older.slice(0, query.limit).map((e) => structuredClone(e)),
      hasMore: older.length > query.limit,
    };
  }

  private live(email: ReceivedEmail): boolean {
    return email.expiresAt > Math.floor(this.now() / 1000);
  }
}

/** Bytes by key, as a file store keeps them; `failPuts` makes the next puts throw (a storage outage). */
export class MapFiles implements InboundFiles {
  readonly files = new Map<string, { bytes: Uint8Array; contentType: string; expiresAt: number }>();
  failPuts = 0;

  async put(key: string, bytes: Uint8Array, options: { contentType: string; expiresAt: number }): Promise<void> {
    if (this.failPuts-- > 0) throw new Error('file store unavailable (injected)');
    this.files.set(key, { bytes: new Uint8Array(bytes), ...options });
  }

  text(key: string): string | undefined {
    const file = this.files.get(key);
    return file && new TextDecoder().decode(file.bytes);
  }
}
