// The copies a send worker hands to the provider, counted toward its tenants' sending reputation (SES's
// denominator: bounce and complaint rates are over copies sent). One invocation's copies are held in memory and
// written together, one ADD per tenant, UTC day and sending domain, when its batch of sends is over, or sooner
// once the oldest has been held `maxHoldMs` (a paced live batch takes minutes: bounces of its first copies must
// not be judged against a denominator that lacks them for long). A batch of five one-recipient emails of one
// domain costs one write, not five; no email.sent or email.delivered event costs one (docs/benchmarks.md,
// "Sending reputation counters").
import { dayOf } from '../../domain/email/reputation';
import { HeldWrites } from '../held-writes';
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
  readonly copies: number;
  readonly spread: string;
}

/** Held at most this long before it is written, even while its batch goes on. */
export const SENT_TALLY_MAX_HOLD_MS = 1_000;

export class SentTally implements SentCopies {
  private readonly held: HeldWrites<Held>;

  constructor(
    store: Pick<ReputationStore, 'count'>,
    private readonly clock: Clock,
    options: {
      readonly maxHoldMs?: number;
      /**
       * Told of a write that failed (after the SDK's retries) and the copies it lost: the figures then undercount
       * what was sent, which can only raise a rate, so it is logged for operators. Nothing is thrown: the sends
       * themselves succeeded.
       */
      readonly failed?: (error: unknown, lost: { readonly tenant: Tenant; readonly copies: number }) => void;
    } = {},
  ) {
    this.held = new HeldWrites(clock, {
      maxHoldMs: options.maxHoldMs ?? SENT_TALLY_MAX_HOLD_MS,
      write: ({ tenant, day, domain, copies, spread }) =>
        store
          .count({ accountId: tenant.accountId, mode: tenant.mode }, { day, domain, counts: { sent: copies }, spread })
          .catch((error: unknown) => options.failed?.(error, { tenant, copies })),
    });
  }

  add(tenant: Tenant, sent: { readonly domain: string | null; readonly copies: number; readonly emailId: string }) {
    if (sent.copies <= 0) return;
    const day = dayOf(this.clock.now());
    const key = JSON.stringify([tenant.accountId, tenant.mode, day, sent.domain]);
    const counts = { tenant, day, domain: sent.domain, copies: sent.copies, spread: sent.emailId };
    this.held.add(key, counts, (held, more) => ({ ...held, copies: held.copies + more.copies }));
  }

  /** Writes everything held and waits for every write under way (the end of a batch of sends). */
  flush(): Promise<void> {
    return this.held.flush();
  }
}
