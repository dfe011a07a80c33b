// Unit tests for the retry schedule (lambdas/domain/webhooks/retry-policy.ts, spec §6.2.4) and the delivery
// state machine (lambdas/domain/webhooks/delivery.ts, spec §3.2, DESIGN §4): automatic attempts retry after
// 1 s, 30 s, 5 min and 30 min and fail after the 5th; manual and test attempts never schedule; only 2xx succeeds.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AttemptKind,
  type AttemptOutcome,
  afterAttempt,
  excerpt,
  isSuccess,
  NO_TIMINGS,
  RESPONSE_EXCERPT_CHARS,
} from '../../lambdas/domain/webhooks/delivery';
import {
  DEFAULT_RETRY_DELAYS_SECONDS,
  maxAttempts,
  type RetryPolicy,
  retryDelaySeconds,
} from '../../lambdas/domain/webhooks/retry-policy';

const SPEC_POLICY: RetryPolicy = { delaysSeconds: DEFAULT_RETRY_DELAYS_SECONDS };
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

const outcome = (changes: Partial<AttemptOutcome> = {}): AttemptOutcome => ({
  at: T0,
  statusCode: 200,
  durationMs: 120,
  error: null,
  errorClass: null,
  timings: NO_TIMINGS,
  response: '',
  ...changes,
});
const failure = (changes: Partial<AttemptOutcome> = {}) =>
  outcome({ statusCode: 500, errorClass: 'http_5xx', response: 'oops', ...changes });

describe('retry policy', () => {
  it('is the spec schedule: 1 s, 30 s, 5 min, 30 min, so 5 attempts in all', () => {
    expect(DEFAULT_RETRY_DELAYS_SECONDS).toEqual([1, 30, 300, 1800]);
    expect(maxAttempts(SPEC_POLICY)).toBe(5);
    expect([1, 2, 3, 4, 5].map((made) => retryDelaySeconds(SPEC_POLICY, made))).toEqual([1, 30, 300, 1800, null]);
  });

  it('has length + 1 attempts for a custom schedule, and one attempt for an empty one', () => {
    expect(maxAttempts({ delaysSeconds: [0.1, 0.2] })).toBe(3);
    expect(maxAttempts({ delaysSeconds: [] })).toBe(1);
    expect(retryDelaySeconds({ delaysSeconds: [] }, 1)).toBeNull();
  });
});

describe('isSuccess: 2xx only', () => {
  it.each([200, 201, 202, 204, 299])('%i succeeds', (statusCode) => {
    expect(isSuccess(outcome({ statusCode }))).toBe(true);
  });

  it.each([100, 101, 199, 300, 301, 302, 303, 304, 307, 308, 400, 401, 404, 410, 429, 500, 502, 503, 504])(
    '%i fails (redirects are not followed, so a 3xx is a failure)',
    (statusCode) => {
      expect(isSuccess(outcome({ statusCode }))).toBe(false);
    },
  );

  it('fails without a status (time-out, refused, DNS, guard) and whenever an error is recorded', () => {
    expect(isSuccess(outcome({ statusCode: null, error: 'timed out after 10 s' }))).toBe(false);
    expect(isSuccess(outcome({ statusCode: null, error: null }))).toBe(false);
    expect(isSuccess(outcome({ statusCode: 200, error: 'response body aborted' }))).toBe(false);
  });
});

describe('afterAttempt: automatic attempts', () => {
  it('walks the full path: 4 failures stay pending at 1 s, 30 s, 5 min, 30 min, the 5th fails for good', () => {
    // Arrange
    const seen: { status: string; attempts: number; retryInSeconds: number | null; nextAttemptAt: number | null }[] =
      [];
    let attempts = 0;
    let at = T0;

    // Act: each attempt starts when the previous one scheduled it.
    for (let i = 0; i < 5; i++) {
      const next = afterAttempt(attempts, failure({ at, durationMs: 250 }), 'automatic', SPEC_POLICY);
      seen.push(next);
      expect(next.deliveredAt).toBeNull();
      attempts = next.attempts;
      at = next.nextAttemptAt ?? at;
    }

    // Assert
    const elapsed = (seconds: number, attemptsSoFar: number) => T0 + seconds * 1000 + attemptsSoFar * 250;
    expect(seen).toEqual([
      { status: 'pending', attempts: 1, retryInSeconds: 1, nextAttemptAt: elapsed(1, 1), deliveredAt: null },
      { status: 'pending', attempts: 2, retryInSeconds: 30, nextAttemptAt: elapsed(31, 2), deliveredAt: null },
      { status: 'pending', attempts: 3, retryInSeconds: 300, nextAttemptAt: elapsed(331, 3), deliveredAt: null },
      { status: 'pending', attempts: 4, retryInSeconds: 1800, nextAttemptAt: elapsed(2131, 4), deliveredAt: null },
      { status: 'failed', attempts: 5, retryInSeconds: null, nextAttemptAt: null, deliveredAt: null },
    ]);
  });

  it('schedules the next attempt at start + duration + delay', () => {
    const next = afterAttempt(1, failure({ at: 1_700_000_000_123, durationMs: 10_000 }), 'automatic', SPEC_POLICY);

    expect(next).toMatchObject({ status: 'pending', attempts: 2, retryInSeconds: 30 });
    expect(next.nextAttemptAt).toBe(1_700_000_000_123 + 10_000 + 30_000);
  });

  it.each([0, 1, 2, 3, 4])('succeeds on attempt %i + 1 with deliveredAt = end of the attempt', (attemptsBefore) => {
    const next = afterAttempt(attemptsBefore, outcome({ at: T0, durationMs: 87 }), 'automatic', SPEC_POLICY);

    expect(next).toEqual({
      status: 'succeeded',
      attempts: attemptsBefore + 1,
      nextAttemptAt: null,
      retryInSeconds: null,
      deliveredAt: T0 + 87,
    });
  });

  it.each([
    ['a 302 redirect', failure({ statusCode: 302 })],
    ['a 404', failure({ statusCode: 404 })],
    ['a 503', failure({ statusCode: 503 })],
    ['no answer in 10 s', failure({ statusCode: null, durationMs: 10_000, error: 'timed out after 10 s' })],
    ['a 200 with an error', outcome({ statusCode: 200, error: 'connection reset while reading the body' })],
  ])('treats %s as a failed attempt that is retried', (_, result) => {
    expect(afterAttempt(0, result, 'automatic', SPEC_POLICY)).toMatchObject({
      status: 'pending',
      attempts: 1,
      retryInSeconds: 1,
      deliveredAt: null,
    });
  });

  it('fails without a next attempt when an automatic attempt comes after manual retries past max_attempts', () => {
    expect(afterAttempt(6, failure(), 'automatic', SPEC_POLICY)).toEqual({
      status: 'failed',
      attempts: 7,
      nextAttemptAt: null,
      retryInSeconds: null,
      deliveredAt: null,
    });
  });

  it('never schedules past the 5th attempt, and schedules exactly the spec delay before it (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.oneof(fc.integer({ min: 100, max: 199 }), fc.integer({ min: 300, max: 599 }), fc.constant(null)),
        fc.integer({ min: 0, max: 10_000 }),
        (attemptsBefore, statusCode, durationMs) => {
          const next = afterAttempt(attemptsBefore, failure({ statusCode, durationMs }), 'automatic', SPEC_POLICY);
          const delay = [1, 30, 300, 1800][attemptsBefore];
          expect(next.attempts).toBe(attemptsBefore + 1);
          expect(next.deliveredAt).toBeNull();
          if (delay === undefined) {
            expect(next).toMatchObject({ status: 'failed', nextAttemptAt: null, retryInSeconds: null });
          } else {
            expect(next).toMatchObject({ status: 'pending', retryInSeconds: delay });
            expect(next.nextAttemptAt).toBe(T0 + durationMs + delay * 1000);
          }
        },
      ),
    );
  });
});

describe('afterAttempt: a custom policy (configuration, not code)', () => {
  it('gives 3 attempts for [0.1, 0.2] with sub-second delays in milliseconds', () => {
    const policy: RetryPolicy = { delaysSeconds: [0.1, 0.2] };

    const first = afterAttempt(0, failure({ durationMs: 5 }), 'automatic', policy);
    const second = afterAttempt(first.attempts, failure({ durationMs: 5 }), 'automatic', policy);
    const third = afterAttempt(second.attempts, failure({ durationMs: 5 }), 'automatic', policy);

    expect(first).toMatchObject({ status: 'pending', attempts: 1, retryInSeconds: 0.1, nextAttemptAt: T0 + 105 });
    expect(second).toMatchObject({ status: 'pending', attempts: 2, retryInSeconds: 0.2, nextAttemptAt: T0 + 205 });
    expect(third).toMatchObject({ status: 'failed', attempts: 3, retryInSeconds: null, nextAttemptAt: null });
  });
});

describe('afterAttempt: manual retries and test sends never schedule', () => {
  it('a successful manual retry of a failed delivery: attempts 5 → 6, succeeded, delivered_at set', () => {
    expect(afterAttempt(5, outcome({ durationMs: 40 }), 'manual', SPEC_POLICY)).toEqual({
      status: 'succeeded',
      attempts: 6,
      nextAttemptAt: null,
      retryInSeconds: null,
      deliveredAt: T0 + 40,
    });
  });

  it('a failed manual retry of a failed delivery: attempts 5 → 6, failed, nothing scheduled', () => {
    expect(afterAttempt(5, failure(), 'manual', SPEC_POLICY)).toEqual({
      status: 'failed',
      attempts: 6,
      nextAttemptAt: null,
      retryInSeconds: null,
      deliveredAt: null,
    });
  });

  it.each<[AttemptKind, number]>([
    ['manual', 0],
    ['manual', 1],
    ['manual', 3],
    ['test', 0],
  ])('a failed %s attempt after %i attempts is failed, not retried, though retries would remain', (kind, before) => {
    expect(afterAttempt(before, failure({ statusCode: 500 }), kind, SPEC_POLICY)).toEqual({
      status: 'failed',
      attempts: before + 1,
      nextAttemptAt: null,
      retryInSeconds: null,
      deliveredAt: null,
    });
  });

  it('a test send that gets a 2xx is succeeded after one attempt', () => {
    expect(afterAttempt(0, outcome({ statusCode: 204 }), 'test', SPEC_POLICY)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      nextAttemptAt: null,
    });
  });
});

describe('excerpt: the first 500 characters of the response', () => {
  const codePoints = (text: string) => [...text].length;
  const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

  it('keeps a short response whole and cuts a long one at 500', () => {
    expect(RESPONSE_EXCERPT_CHARS).toBe(500);
    expect(excerpt('ok')).toBe('ok');
    expect(excerpt('')).toBe('');
    expect(excerpt('x'.repeat(500))).toBe('x'.repeat(500));
    expect(excerpt(`${'x'.repeat(500)}TAIL`)).toBe('x'.repeat(500));
  });

  it('counts an emoji as one character and never splits it', () => {
    expect(excerpt('😀'.repeat(600))).toBe('😀'.repeat(500));
    expect(excerpt(`${'a'.repeat(499)}😀zz`)).toBe(`${'a'.repeat(499)}😀`);
  });

  /** Around the 500 mark, mixing 1-unit and 2-unit (astral) code points so a UTF-16 cut would show. */
  const responseText = fc
    .array(fc.constantFrom('a', 'é', '日', '😀', '𝄞', '\u0301'), { minLength: 450, maxLength: 700 })
    .map((chars) => chars.join(''));

  it('is a well-formed prefix of min(500, length) code points for any text (property)', () => {
    fc.assert(
      fc.property(responseText, (text) => {
        const cut = excerpt(text);
        expect(text.startsWith(cut)).toBe(true);
        expect(codePoints(cut)).toBe(Math.min(500, codePoints(text)));
        expect(LONE_SURROGATE.test(cut)).toBe(false);
      }),
    );
  });
});
