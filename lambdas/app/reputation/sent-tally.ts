// The copies a send worker hands to the provider, counted toward its tenants' sending reputation (SES's
// denominator: bounce and complaint rates are over copies sent). One invocation's copies are held in memory and
// written together, one ADD per tenant, UTC day and sending domain, when its batch of sends is over, or sooner
// once the oldest has been held `maxHoldMs` (a paced live batch takes minutes: bounces of its first copies must
// not be judged against a denominator that lacks them for long). A batch of five one-recipient emails of one
// domain costs one write, not five; no email.sent or email.delivered event costs one (docs/benchmarks.md,
// "Sending reputation counters").
import { dayOf } from '../../domain/email/reputation';
import type { Clock } from '../ports';
import type { Tenant } from '../webhooks/ports';
import type { ReputationStore } from './ports';

/** Where the send worker tells the copies the provider took (app/emails/send-emails). */
export interface SentCopies {
  /** `copies` of an email (`emailId`, which spreads the write over the counter shards) from `domain` were sent. */
  add(
    tenant: Tenant,
    sent: { readonly domain: string | null; readonly copies: number; readonly emailId: string },
  ): void;
}

interface Held {
  readonly tenant: Tenant;
  readonly day: string;
  readonly domain: string | null;
  copies: number;
  readonly spread: string;
}

/** Held at most this long before it is written, even while its batch goes on. */
export const SENT_TALLY_MAX_HOLD_MS = 1_000;

export class SentTally implements SentCopies {
  private held = new Map<string, Held>();
  private heldSince: number | null = null;
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly store: Pick<ReputationStore, 'count'>,
    private readonly clock: Clock,
    private readonly options: {
      readonly maxHoldMs?: number;
      /**
       * Told of a write that failed (after the SDK's retries) and the copies it lost: the figures then undercount
       * what was sent, which can only raise a rate, so it is logged for operators. Nothing is thrown: the sends
       * themselves succeeded.
       */
      readonly failed?: (error: unknown, lost: { readonly tenant: Tenant; readonly copies: number }) => void;
    } = {},
  ) {}

  add(tenant: Tenant, sent: { readonly domain: string | null; readonly copies: number; readonly emailId: string }) {
    if (sent.copies <= 0) return;
    const now = this.clock.now();
    const day = dayOf(now);
    const key = JSON.stringify([tenant.accountId, tenant.mode, day, sent.domain]);
    const held = this.held.get(key);
    if (held) held.copies += sent.copies;
    else this.held.set(key, { tenant, day, domain: sent.domain, copies: sent.copies, spread: sent.emailId });
    this.heldSince ??= now;
    if (now - this.heldSince >= (this.options.maxHoldMs ?? SENT_TALLY_MAX_HOLD_MS)) this.write();
  }

  /** Writes everything held and waits for every write under way (the end of a batch of sends). */
  async flush(): Promise<void> {
    this.write();
    while (this.writing.size) await Promise.all([...this.writing]);
  }

  private write(): void {
    const groups = [...this.held.values()];
    this.held = new Map();
    this.heldSince = null;
    for (const { tenant, day, domain, copies, spread } of groups) {
      const written: Promise<void> = this.store
        .count({ accountId: tenant.accountId, mode: tenant.mode }, { day, domain, counts: { sent: copies }, spread })
        .catch((error: unknown) => this.options.failed?.(error, { tenant, copies }))
        .finally(() => this.writing.delete(written));
      this.writing.add(written);
    }
  }
}
