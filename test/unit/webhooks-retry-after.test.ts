// Unit tests for the receiver's pace (lambdas/domain/webhooks/retry-after.ts) and how the delivery state machine
// applies it (afterAttempt): Retry-After in seconds or as an HTTP date, on 429 and 503 only, never shortening the
// schedule, capped at an hour, never adding an attempt.
import { describe, expect, it } from 'vitest';
import { type AttemptOutcome, afterAttempt, NO_TIMINGS } from '../../lambdas/domain/webhooks/delivery';
import {
  askedRetryAfter,
  pacedDelaySeconds,
  parseRetryAfter,
  RETRY_AFTER_CAP_SECONDS,
} from '../../lambdas/domain/webhooks/retry-after';

const T0 = Date.UTC(2026, 10, 26, 4, 0, 0);
const POLICY = { delaysSeconds: [1, 1, 1, 1] };

const answer = (statusCode: number, headers?: Record<string, string>): AttemptOutcome => ({
  at: T0,
  statusCode,
  durationMs: 1000,
  error: `HTTP ${statusCode}`,
  errorClass: statusCode >= 500 ? 'http_5xx' : 'http_4xx',
  timings: NO_TIMINGS,
  response: '',
  ...(headers ? { responseHeaders: headers } : {}),
});

describe('parseRetryAfter', () => {
  it('reads delta seconds', () => {
    expect(parseRetryAfter('3', T0)).toBe(3);
    expect(parseRetryAfter(' 120 ', T0)).toBe(120);
    expect(parseRetryAfter('0', T0)).toBe(0);
  });

  it('reads an HTTP date (IMF-fixdate and RFC 850) as the seconds until it, rounded up; a past date is 0', () => {
    expect(parseRetryAfter(new Date(T0 + 90_000).toUTCString(), T0)).toBe(90);
    expect(parseRetryAfter(new Date(T0 + 1_500).toUTCString(), T0 + 500)).toBe(1);
    expect(parseRetryAfter('Thursday, 26-Nov-26 04:02:00 GMT', T0)).toBe(120);
    expect(parseRetryAfter(new Date(T0 - 60_000).toUTCString(), T0)).toBe(0);
  });

  it('refuses anything else', () => {
    for (const value of ['', '-1', '1.5', 'soon', '3 s', '99999999999', 'Mon, 99 Foo 2026 00:00:00 GMT']) {
      expect({ value, seconds: parseRetryAfter(value, T0) }).toEqual({ value, seconds: null });
    }
  });
});

describe('askedRetryAfter', () => {
  it('honours 429 and 503 only', () => {
    expect(askedRetryAfter(answer(429, { 'retry-after': '5' }))).toBe(5);
    expect(askedRetryAfter(answer(503, { 'retry-after': '5' }))).toBe(5);
    for (const status of [500, 502, 504, 400, 410, 200]) {
      expect({ status, asked: askedRetryAfter(answer(status, { 'retry-after': '5' })) }).toEqual({
        status,
        asked: null,
      });
    }
  });

  it('is null without the header or with an unreadable one', () => {
    expect(askedRetryAfter(answer(503))).toBeNull();
    expect(askedRetryAfter(answer(503, { 'retry-after': 'later' }))).toBeNull();
  });

  it('caps the wait at an hour', () => {
    expect(askedRetryAfter(answer(429, { 'retry-after': '86400' }))).toBe(RETRY_AFTER_CAP_SECONDS);
    expect(RETRY_AFTER_CAP_SECONDS).toBe(3600);
  });

  it('counts a date from when the answer arrived (start + duration)', () => {
    const at = new Date(T0 + 1000 + 10_000).toUTCString();
    expect(askedRetryAfter(answer(503, { 'retry-after': at }))).toBe(10);
  });
});

describe('pacedDelaySeconds', () => {
  it('takes the longer of the schedule and the ask', () => {
    expect(pacedDelaySeconds(1, 3)).toBe(3);
    expect(pacedDelaySeconds(300, 3)).toBe(300);
    expect(pacedDelaySeconds(1, null)).toBe(1);
  });
});

describe('afterAttempt with Retry-After', () => {
  it('moves the next automatic attempt to the asked time when it is later than the schedule', () => {
    const next = afterAttempt(0, answer(503, { 'retry-after': '3' }), 'automatic', POLICY);
    expect(next).toMatchObject({ status: 'pending', retryInSeconds: 3, retryAfterSeconds: 3 });
    expect(next.nextAttemptAt).toBe(T0 + 1000 + 3000);
  });

  it('keeps the schedule when it is longer, and says what was asked', () => {
    const next = afterAttempt(0, answer(429, { 'retry-after': '3' }), 'automatic', { delaysSeconds: [30] });
    expect(next).toMatchObject({ status: 'pending', retryInSeconds: 30, retryAfterSeconds: 3 });
  });

  it('never adds an attempt: the last one still fails, the ask recorded', () => {
    const next = afterAttempt(4, answer(503, { 'retry-after': '3' }), 'automatic', POLICY);
    expect(next).toMatchObject({ status: 'failed', retryInSeconds: null, nextAttemptAt: null, retryAfterSeconds: 3 });
  });

  it('adds nothing to a transition without an ask, or with an ask of 0', () => {
    expect(afterAttempt(0, answer(500, { 'retry-after': '3' }), 'automatic', POLICY)).not.toHaveProperty(
      'retryAfterSeconds',
    );
    const now = afterAttempt(0, answer(503, { 'retry-after': '0' }), 'automatic', POLICY);
    expect(now).not.toHaveProperty('retryAfterSeconds');
    expect(now.retryInSeconds).toBe(1);
  });
});
