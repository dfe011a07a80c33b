// Unit tests of the sending-reputation rules (lambdas/domain/email/reputation.ts): what each event counts (SES's
// definition: hard bounces and complaints over copies sent, account-suppressed bounces left out; sent copies and
// deliveries count nothing per event), delivered derived from sent less bounced, the rolling window of UTC days,
// sums less a lift's baseline, the minimum volume, the thresholds (reached is past; judged on the exact rate, not
// its rounding), the warn / pause / clear transitions, and the policy's own checks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Counts,
  countsOf,
  DEFAULT_REPUTATION_POLICY,
  dayOf,
  daysBetween,
  deliveredOf,
  isJudgedMode,
  judge,
  NO_COUNTS,
  percent,
  policyProblems,
  type ReputationPolicy,
  raisesRates,
  rate,
  sendingDomain,
  sumDays,
  transitions,
  windowOf,
} from '../../lambdas/domain/email/reputation';

const POLICY = DEFAULT_REPUTATION_POLICY;
const counts = (c: Partial<Counts>): Counts => ({ ...NO_COUNTS, ...c });

describe('countsOf', () => {
  it.each([
    // Copies sent are counted by the send worker, a batch at a time; deliveries are derived, never counted.
    ['email.sent', {}, null],
    ['email.delivered', {}, null],
    ['email.complained', {}, ['complained']],
    ['email.bounced', { bounce_type: 'Permanent' }, ['bounced', 'bounced_permanent']],
    ['email.bounced', { bounce_type: 'Transient' }, ['bounced', 'bounced_transient']],
    ['email.bounced', { bounce_type: 'Undetermined' }, ['bounced', 'bounced_undetermined']],
    // SES: "does not count toward your bounce rate metric".
    ['email.bounced', { bounce_type: 'Permanent', refused_by_account_suppression_list: true }, ['bounced']],
    ['email.opened', {}, null],
    ['email.failed', { reason: 'x' }, null],
    ['email.suppressed', { reason: 'hard_bounce' }, null],
    ['domain.created', {}, null],
  ])('%s %j counts %j', (type, data, expected) => {
    expect(countsOf({ type, data })).toEqual(expected);
  });

  it('only hard bounces and complaints can raise a rate (and so call for a judgment)', () => {
    expect(raisesRates(['bounced', 'bounced_permanent'])).toBe(true);
    expect(raisesRates(['complained'])).toBe(true);
    expect(raisesRates(['bounced', 'bounced_transient'])).toBe(false);
    expect(raisesRates(['sent'])).toBe(false);
  });
});

describe('deliveredOf', () => {
  it('is sent less every kind of bounce, never below zero (a day whose bounces came from the day before)', () => {
    expect(deliveredOf(counts({ sent: 23, bounced: 1, bounced_permanent: 1, complained: 1 }))).toBe(22);
    expect(deliveredOf(counts({ sent: 10, bounced: 3, bounced_transient: 2, bounced_undetermined: 1 }))).toBe(7);
    expect(deliveredOf(counts({ sent: 1, bounced: 4, bounced_permanent: 4 }))).toBe(0);
    expect(deliveredOf(NO_COUNTS)).toBe(0);
  });
});

describe('sendingDomain', () => {
  it.each([
    ['News <News@Mail.Example.com>', 'mail.example.com'],
    ['billing@acme.example', 'acme.example'],
    ['no-at-sign', null],
    [42, null],
  ])('%j → %j', (from, domain) => {
    expect(sendingDomain(from)).toBe(domain);
  });
});

describe('the rolling window', () => {
  it('is the last N UTC days, today included, oldest first, across a month and a year', () => {
    expect(windowOf(Date.UTC(2026, 0, 2, 23, 59, 59), 7)).toEqual([
      '2025-12-27',
      '2025-12-28',
      '2025-12-29',
      '2025-12-30',
      '2025-12-31',
      '2026-01-01',
      '2026-01-02',
    ]);
    expect(windowOf(Date.UTC(2024, 2, 1, 0, 0, 0), 2)).toEqual(['2024-02-29', '2024-03-01']);
    expect(windowOf(Date.UTC(2026, 5, 1, 12), 1)).toEqual(['2026-06-01']);
  });

  it('buckets by UTC day, whatever the process time zone', () => {
    expect(dayOf(Date.parse('2026-03-01T23:30:00-02:00'))).toBe('2026-03-02');
    expect(daysBetween('2026-02-27', '2026-03-01')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
    expect(daysBetween('2026-03-02', '2026-03-01')).toEqual([]);
  });

  it('sums the window’s days less a lift’s baseline, never below zero, ignoring days outside it', () => {
    const byDay = {
      '2026-03-01': counts({ sent: 100, bounced_permanent: 9 }),
      '2026-03-02': counts({ sent: 50, complained: 1 }),
      '2026-02-01': counts({ sent: 1000 }),
    };
    const baseline = { '2026-03-01': counts({ sent: 100, bounced_permanent: 9 }), '2026-03-02': counts({ sent: 60 }) };
    expect(sumDays(byDay, ['2026-03-01', '2026-03-02'])).toEqual(
      counts({ sent: 150, bounced_permanent: 9, complained: 1 }),
    );
    expect(sumDays(byDay, ['2026-03-01', '2026-03-02'], baseline)).toEqual(counts({ complained: 1 }));
  });
});

describe('judge', () => {
  it('judges nothing below the minimum volume, whatever the rates', () => {
    const judgment = judge(counts({ sent: 199, bounced_permanent: 199, complained: 199 }), POLICY);
    expect(judgment).toMatchObject({ judged: false, level: 'ok', breaches: [] });
    expect(judgment.figures).toEqual({ sent: 199, bounced: 199, complained: 199, bounceRate: 1, complaintRate: 1 });
  });

  it.each([
    ['under both warnings', { sent: 1000, bounced_permanent: 39, complained: 0 }, 'ok', []],
    ['at the 4% bounce warning (reached is past)', { sent: 1000, bounced_permanent: 40 }, 'warning', ['bounce_rate']],
    ['at the 0.08% complaint warning', { sent: 10_000, complained: 8 }, 'warning', ['complaint_rate']],
    ['just under the 8% pause', { sent: 1000, bounced_permanent: 79 }, 'warning', ['bounce_rate']],
    ['at the 8% bounce pause', { sent: 1000, bounced_permanent: 80 }, 'paused', ['bounce_rate']],
    ['at the 0.3% complaint pause', { sent: 1000, complained: 3 }, 'paused', ['complaint_rate']],
    [
      'past both pauses',
      { sent: 200, bounced_permanent: 50, complained: 20 },
      'paused',
      ['bounce_rate', 'complaint_rate'],
    ],
    // Soft bounces and account-suppressed ones are not SES's bounce rate.
    ['many soft bounces', { sent: 1000, bounced: 500, bounced_transient: 500 }, 'ok', []],
  ] as const)('%s: %j → %s', (_name, c, level, breaches) => {
    expect(judge(counts(c), POLICY)).toMatchObject({ judged: true, level, breaches });
  });

  it('judges the exact rate, not its 4-decimal display (0.039996 shows as 0.04 and is no warning)', () => {
    const judgment = judge(counts({ sent: 25_001, bounced_permanent: 1000 }), POLICY);
    expect(judgment.figures.bounceRate).toBe(0.04);
    expect(judgment.level).toBe('ok');
  });

  it('is paused exactly when a rate reaches its pause threshold, with enough volume (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 1_000 }),
        (sent, bounced, complained) => {
          const judgment = judge(counts({ sent, bounced_permanent: bounced, complained }), POLICY);
          const past =
            sent >= POLICY.minimumSent &&
            (bounced / sent >= POLICY.pause.bounceRate || complained / sent >= POLICY.pause.complaintRate);
          expect(judgment.level === 'paused').toBe(past);
          if (judgment.level === 'warning') expect(sent).toBeGreaterThanOrEqual(POLICY.minimumSent);
        },
      ),
    );
  });

  it('rates: rounded to 4 decimals, null when nothing was sent; percent for people', () => {
    expect(rate(1, 3)).toBe(0.3333);
    expect(rate(0, 0)).toBeNull();
    expect(percent(0.0435)).toBe('4.35%');
    expect(percent(0.003)).toBe('0.3%');
    expect(percent(null)).toBe('n/a');
  });
});

describe('transitions', () => {
  const at = (level: 'ok' | 'warning' | 'paused', judged = true) => ({
    figures: { sent: 0, bounced: 0, complained: 0, bounceRate: null, complaintRate: null },
    judged,
    level,
    breaches: [],
  });

  it.each([
    ['not warned, past the warning', { warned: false, paused: false }, at('warning'), ['warn']],
    ['not warned, straight past the pause', { warned: false, paused: false }, at('paused'), ['warn', 'pause']],
    ['warned, past the pause', { warned: true, paused: false }, at('paused'), ['pause']],
    ['warned, still past the warning: told once', { warned: true, paused: false }, at('warning'), []],
    ['warned, back under it: the episode ends', { warned: true, paused: false }, at('ok'), ['clear']],
    ['paused, back under: only an operator unpauses', { warned: true, paused: true }, at('ok'), []],
    ['paused, still past', { warned: true, paused: true }, at('paused'), []],
    ['not enough volume: nothing changes', { warned: true, paused: false }, at('ok', false), []],
  ] as const)('%s', (_name, standing, judgment, expected) => {
    expect(transitions(standing, judgment)).toEqual(expected);
  });
});

describe('the policy', () => {
  it('defaults below SES’s own: warn 4% / 0.08%, pause 8% / 0.3%, 7 days, 200 sent, test mode not judged', () => {
    expect(POLICY).toEqual({
      windowDays: 7,
      minimumSent: 200,
      warn: { bounceRate: 0.04, complaintRate: 0.0008 },
      pause: { bounceRate: 0.08, complaintRate: 0.003 },
      judgeTestMode: false,
    });
    expect(policyProblems(POLICY)).toEqual([]);
    expect(isJudgedMode('live', POLICY)).toBe(true);
    expect(isJudgedMode('test', POLICY)).toBe(false);
    expect(isJudgedMode('test', { judgeTestMode: true })).toBe(true);
  });

  it('lists every problem: a warning past its pause, a pause at or past SES’s, a window or volume out of range', () => {
    const bad: ReputationPolicy = {
      windowDays: 0,
      minimumSent: 0,
      warn: { bounceRate: 0.09, complaintRate: 0.006 },
      pause: { bounceRate: 0.1, complaintRate: 0.005 },
      judgeTestMode: false,
    };
    expect(policyProblems(bad)).toEqual([
      'windowDays must be a whole number of days from 1 to 30',
      'minimumSent must be a whole number, at least 1',
      'warn.complaintRate is above pause.complaintRate',
      "pause.bounceRate must be below SES's own pause (10%)",
      "pause.complaintRate must be below SES's own pause (0.5%)",
    ]);
    expect(policyProblems({ ...POLICY, warn: { bounceRate: 0, complaintRate: 1 } })).toEqual([
      'warn.bounceRate must be a fraction above 0 and below 1',
      'warn.complaintRate must be a fraction above 0 and below 1',
      'warn.complaintRate is above pause.complaintRate',
    ]);
  });
});
