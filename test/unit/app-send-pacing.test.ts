// The send worker keeps the sending rate (sendQueuedEmail with a livePacer: lambdas/app/emails/paced-provider.ts
// and the in-process TokenBucketPacer) on vitest's fake timers (the pacer's sleeps are timers on a fake clock): N live copies at rate R go out
// one per 1/R seconds, the whole email taking at least (N - 1)/R seconds; test mode is never paced; a copy whose
// turn would come after the worker's deadline is not sent then, and the next receive sends it, once.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TokenBucketPacer } from '../../lambdas/adapters/in-process/send-pacer';
import { domainId } from '../../lambdas/app/domains/domains';
import { SEND_RATE_DEFERRED } from '../../lambdas/app/emails/paced-provider';
import type { CopyOutcome, EmailProvider, OutgoingCopy } from '../../lambdas/app/emails/ports';
import {
  type SendEmailDeps,
  SendIncompleteError,
  sendEmails,
  sendQueuedEmail,
} from '../../lambdas/app/emails/send-emails';
import type { Clock, Principal } from '../../lambdas/app/ports';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import type { EmailMessage } from '../../lambdas/domain/email/email';
import {
  fixedLinks,
  InMemoryDomainRepository,
  InMemoryEmailRepository,
  InMemoryQuotaCounter,
  InMemorySuppressionList,
  RecordingEventPublisher,
  RecordingSendScheduler,
  seededRandom,
} from '../support/fakes';

const T0 = Date.UTC(2025, 5, 10, 9, 0, 0);
const ACCOUNT = 'acct_paced';
const live: Tenant = { accountId: ACCOUNT, mode: 'live' };

/** Records when (fake time) each copy reached it. */
class TimedProvider implements EmailProvider {
  readonly copies: { to: string; at: number }[] = [];
  constructor(private readonly clock: Clock) {}
  async send(_email: EmailMessage, copies: readonly OutgoingCopy[]): Promise<CopyOutcome[]> {
    for (const copy of copies) this.copies.push({ to: copy.to, at: this.clock.now() });
    return copies.map(() => ({ status: 'sent' }));
  }
}

function setup(perSecond: number) {
  const clock: Clock = { now: () => Date.now() };
  const providers = { live: new TimedProvider(clock), test: new TimedProvider(clock) };
  const waits: number[] = [];
  const sleep = (ms: number) => {
    waits.push(ms);
    return new Promise<void>((resolve) => setTimeout(resolve, ms));
  };
  const domains = new InMemoryDomainRepository();
  const deps: SendEmailDeps = {
    emails: new InMemoryEmailRepository(),
    domains,
    providerFor: (mode) => providers[mode],
    quotas: new InMemoryQuotaCounter(),
    suppressions: new InMemorySuppressionList(),
    events: new RecordingEventPublisher(),
    sendScheduler: new RecordingSendScheduler(),
    links: fixedLinks(),
    clock,
    random: seededRandom('pacing'),
    livePacer: new TokenBucketPacer({ perSecond, clock, sleep }),
  };
  const accept = async (mode: Tenant['mode'], n: number) => {
    if (mode === 'live') {
      const at = new Date(T0 - 86_400_000).toISOString();
      const name = 'acme.example';
      await domains.create(
        { ...live, id: domainId(live, name), name, status: 'verified', records: [], createdAt: at, updatedAt: at },
        [],
      );
    }
    const caller: Principal = { accountId: ACCOUNT, keyId: 'key_1', mode, scopes: ['email:send'], plan: 'growth' };
    const to = Array.from({ length: n }, (_, i) => `r${i}@example.com`);
    const [id] = await sendEmails(deps, caller, [
      { from: 'a@acme.example', to, cc: [], bcc: [], replyTo: [], subject: 'S', text: 'x', headers: {}, tags: [] },
    ]);
    return id as string;
  };
  return { clock, providers, waits, deps, accept };
}

/** Runs `work` to its end, moving the fake clock from timer to timer (each pacer wait is one). */
async function settle<T>(work: Promise<T>): Promise<T> {
  let done = false;
  // Handled at once: a rejection while the clock moves is the caller's to see, not an unhandled one.
  const outcome = work.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  void outcome.then(() => {
    done = true;
  });
  for (let step = 0; !done && step < 100_000; step++) await vi.advanceTimersToNextTimerAsync();
  const settled = await outcome;
  if ('error' in settled) throw settled.error;
  return settled.value;
}

beforeEach(() => {
  vi.useFakeTimers({ now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('send pacing', () => {
  it('sends N live copies at rate R one per 1/R seconds: the email takes at least (N - 1)/R seconds', async () => {
    // Arrange: 50 recipients (5 chunks) at 1.4/s, a send worker invocation's share of 14/s over 10.
    const s = setup(1.4);
    const id = await s.accept('live', 50);

    // Act
    const result = await settle(sendQueuedEmail(s.deps, id));

    // Assert
    expect(result).toBe('sent');
    const starts = s.providers.live.copies.map((copy) => copy.at - T0);
    expect(new Set(s.providers.live.copies.map((copy) => copy.to)).size).toBe(50);
    expect(starts.at(-1)).toBeGreaterThanOrEqual((49 / 1.4) * 1000);
    for (let i = 1; i < starts.length; i++) {
      expect((starts[i] as number) - (starts[i - 1] as number)).toBeGreaterThanOrEqual(714);
    }
    // What the pacer asked to wait adds up to the same: (N - 1) turns of 1/R seconds.
    expect(s.waits).toHaveLength(49);
  });

  it('keeps any one second to ⌈R⌉ live copies at a rate of 14/s', async () => {
    // Arrange
    const s = setup(14);
    const id = await s.accept('live', 100);

    // Act
    await settle(sendQueuedEmail(s.deps, id));

    // Assert
    const starts = s.providers.live.copies.map((copy) => copy.at);
    const busiest = Math.max(...starts.map((t) => starts.filter((u) => u >= t && u < t + 1000).length));
    expect(starts).toHaveLength(100);
    expect(busiest).toBeLessThanOrEqual(14);
    expect((starts.at(-1) as number) - T0).toBeGreaterThanOrEqual((99 / 14) * 1000);
  });

  it('never paces test mode: its copies never reach SES', async () => {
    // Arrange
    const s = setup(1);
    const id = await s.accept('test', 30);

    // Act
    await settle(sendQueuedEmail(s.deps, id));

    // Assert
    expect(s.providers.test.copies).toHaveLength(30);
    expect(s.providers.test.copies.every((copy) => copy.at === T0)).toBe(true);
    expect(s.waits).toEqual([]);
  });

  it('leaves copies whose turn comes after the deadline to the next receive, which sends each once', async () => {
    // Arrange: 1 copy a second, 5 s before the deadline on every receive.
    const s = setup(1);
    const id = await s.accept('live', 30);
    const deadlines: number[] = [];

    // Act: receive as SQS would until sent, each receive 6 minutes after the last.
    let result: string = 'again';
    for (let receive = 0; receive < 6 && result !== 'sent'; receive++) {
      if (receive > 0) vi.setSystemTime(Date.now() + 6 * 60_000);
      const deadline = s.clock.now() + 5_000;
      deadlines.push(deadline);
      result = await settle(sendQueuedEmail(s.deps, id, { deadline })).catch((error) => {
        if (error instanceof SendIncompleteError) return 'again';
        throw error;
      });
    }

    // Assert: every copy once, none after its receive's deadline, six a receive (at 0, 1, ... 5 s).
    expect(result).toBe('sent');
    const copies = s.providers.live.copies;
    expect(copies.map((copy) => copy.to).sort()).toEqual(
      Array.from({ length: 30 }, (_, i) => `r${i}@example.com`).sort(),
    );
    for (const copy of copies) {
      const deadline = deadlines.find((d) => d >= copy.at) as number;
      expect(copy.at).toBeLessThanOrEqual(deadline);
    }
    expect(deadlines).toHaveLength(5);
    const email = await s.deps.emails.get(id);
    // A deferred copy was claimed once more than it was sent, never twice deferred.
    const tries = Object.values(email?.recipientStates ?? {}).map((state) => state.tries);
    expect(Math.max(...tries)).toBe(2);
    expect(SEND_RATE_DEFERRED).toMatch(/^send_rate/);
  });
});
