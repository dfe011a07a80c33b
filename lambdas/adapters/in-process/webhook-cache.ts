// The delivery worker's webhook reads, kept in the function for at most `maxAgeMs` (SF_WEBHOOK_CACHE_SECONDS, 1 s on
// AWS): every delivery batch read its tenant's webhooks, so one tenant's traffic heated its webhooks' partition
// (2,700 RCU/s at 10,000 deliveries/s); cached, a container reads each webhook at most once per `maxAgeMs`
// however many batches it runs. An attempt therefore starts with the webhook as read at most `maxAgeMs` before:
// a pause, a deletion, a new URL or secret reach the attempts within that bound (docs/architecture.md).
// Not found (deleted) is kept too. The dispatcher's listing is not cached: no delivery is created for a webhook
// paused or deleted before its event is dispatched.
import type { Clock } from '../../app/ports';
import type { Tenant, Webhook, WebhookReads, WebhookRef } from '../../app/webhooks/ports';

const refKey = (tenant: Tenant, id: string) => `${tenant.accountId}#${tenant.mode}#${id}`;

/** Entries kept before the stale ones are dropped (a container serves a bounded set of webhooks). */
const PRUNE_ABOVE = 1_000;

export class CachedWebhookReads implements WebhookReads {
  /** `read` is when the read that found it started: the entry's age counts from before the read. */
  private readonly entries = new Map<string, { read: number; webhook: Webhook | null }>();

  constructor(
    private readonly source: WebhookReads,
    private readonly clock: Clock,
    private readonly maxAgeMs: number,
  ) {}

  async get(tenant: Tenant, id: string): Promise<Webhook | null> {
    const key = refKey(tenant, id);
    const cached = this.fresh(key);
    if (cached !== undefined) return cached;
    const read = this.clock.now();
    const webhook = await this.source.get(tenant, id);
    this.keep(key, read, webhook);
    return webhook;
  }

  async getMany(refs: readonly WebhookRef[]): Promise<Webhook[]> {
    const found: Webhook[] = [];
    const missing: WebhookRef[] = [];
    for (const ref of refs) {
      const cached = this.fresh(refKey(ref, ref.id));
      if (cached === undefined) missing.push(ref);
      else if (cached) found.push(cached);
    }
    if (!missing.length) return found;
    const read = this.clock.now();
    const fetched = new Map((await this.source.getMany(missing)).map((w) => [refKey(w, w.id), w]));
    for (const ref of missing) {
      const key = refKey(ref, ref.id);
      this.keep(key, read, fetched.get(key) ?? null);
    }
    return [...found, ...fetched.values()];
  }

  /** The cached answer (null: not found) if read less than maxAgeMs ago; undefined when it must be read. */
  private fresh(key: string): Webhook | null | undefined {
    const entry = this.entries.get(key);
    if (!entry || this.clock.now() - entry.read >= this.maxAgeMs) return undefined;
    return entry.webhook;
  }

  private keep(key: string, read: number, webhook: Webhook | null): void {
    if (this.entries.size >= PRUNE_ABOVE) {
      const now = this.clock.now();
      for (const [k, entry] of this.entries) if (now - entry.read >= this.maxAgeMs) this.entries.delete(k);
    }
    this.entries.set(key, { read, webhook });
  }
}
