// Unit tests for auto-disable's rules (lambdas/domain/webhooks/auto-disable.ts): which attempts cost a write
// (none on a success without a streak), when a streak disables (window AND minimum failures) and when it earns
// its one failing notice.
import { describe, expect, it } from 'vitest';
import {
  autoDisablePolicy,
  DEFAULT_DISABLE_AFTER_SECONDS,
  DEFAULT_FAILING_AFTER_SECONDS,
  type FailureStreak,
  MIN_FAILED_DELIVERIES,
  noteFor,
  redactedUrl,
  verdictFor,
  type WatchedAttempt,
} from '../../lambdas/domain/webhooks/auto-disable';

const policy = autoDisablePolicy(DEFAULT_DISABLE_AFTER_SECONDS, DEFAULT_FAILING_AFTER_SECONDS);
const T0 = Date.UTC(2026, 10, 20, 0, 0, 0);
const DAY = 86_400_000;

const failed = (changes: Partial<WatchedAttempt> = {}): WatchedAttempt => ({
  statusCode: 500,
  ok: false,
  automatic: true,
  first: true,
  ...changes,
});
const succeeded: WatchedAttempt = { statusCode: 200, ok: true, automatic: true, first: true };
const streak = (changes: Partial<FailureStreak> = {}): FailureStreak => ({
  since: T0,
  failures: 3,
  failingNotified: false,
  ...changes,
});

describe('the defaults', () => {
  it('are five days, a day, and ten failed deliveries', () => {
    expect(policy).toEqual({ disableAfterMs: 5 * DAY, failingAfterMs: DAY, minFailures: 10 });
    expect(MIN_FAILED_DELIVERIES).toBe(10);
  });
});

describe('noteFor: the write an attempt calls for', () => {
  it('a success without a streak writes nothing; the first success after failures clears it', () => {
    expect(noteFor(succeeded, null, policy)).toBe('none');
    expect(noteFor(succeeded, streak(), policy)).toBe('clear');
    expect(noteFor({ ...succeeded, automatic: false }, streak(), policy)).toBe('clear');
  });

  it('a 410 disables at once, whatever made the attempt', () => {
    expect(noteFor(failed({ statusCode: 410 }), null, policy)).toBe('gone');
    expect(noteFor(failed({ statusCode: 410, automatic: false, first: false }), streak(), policy)).toBe('gone');
  });

  it('an automatic failure starts a streak, and counts each delivery once (its first attempt) up to the minimum', () => {
    expect(noteFor(failed({ first: false }), null, policy)).toBe('count');
    expect(noteFor(failed(), streak({ failures: 9 }), policy)).toBe('count');
    expect(noteFor(failed({ first: false }), streak({ failures: 3 }), policy)).toBe('none');
    expect(noteFor(failed(), streak({ failures: 10 }), policy)).toBe('none');
  });

  it('manual and test failures do not count', () => {
    expect(noteFor(failed({ automatic: false }), null, policy)).toBe('none');
  });
});

describe('verdictFor', () => {
  it('disables after the window with the minimum of failed deliveries, not before either', () => {
    expect(verdictFor(streak({ failures: 10, failingNotified: true }), T0 + 5 * DAY, policy)).toBe('disable');
    expect(verdictFor(streak({ failures: 10, failingNotified: true }), T0 + 5 * DAY - 1, policy)).toBeNull();
    expect(verdictFor(streak({ failures: 9, failingNotified: true }), T0 + 30 * DAY, policy)).toBeNull();
  });

  it('sends the failing notice once a streak is a day old, once', () => {
    expect(verdictFor(streak(), T0 + DAY - 1, policy)).toBeNull();
    expect(verdictFor(streak(), T0 + DAY, policy)).toBe('failing');
    expect(verdictFor(streak({ failingNotified: true }), T0 + 2 * DAY, policy)).toBeNull();
  });

  it('prefers disabling to the notice when both are due (a window shorter than a day)', () => {
    const short = autoDisablePolicy(5, DEFAULT_FAILING_AFTER_SECONDS);
    expect(verdictFor(streak({ failures: 10 }), T0 + DAY, short)).toBe('disable');
  });

  it('has nothing to say without a streak', () => {
    expect(verdictFor(null, T0 + 100 * DAY, policy)).toBeNull();
  });
});

describe('redactedUrl (what webhook.* events show of a URL)', () => {
  it('keeps the origin and the first path segment: no token path, query, userinfo or fragment', () => {
    expect(redactedUrl('https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX')).toBe(
      'https://hooks.slack.com/services/…',
    );
    expect(redactedUrl('https://discord.com/api/webhooks/123/tok-en')).toBe('https://discord.com/api/…');
    expect(redactedUrl('https://user:pass@example.com:8443/in?token=s3cret#frag')).toBe('https://example.com:8443/in');
    expect(redactedUrl('https://example.com')).toBe('https://example.com/');
    expect(redactedUrl('not a url')).toBe('');
  });
});
