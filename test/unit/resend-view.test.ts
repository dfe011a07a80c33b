// Unit tests of the pure mappings to Resend's names: a webhook's status, a delivery as a webhook event (status,
// attempts and their paging), a suppression's id, origin and event data.
import { describe, expect, it } from 'vitest';
import {
  addressOfSuppressionId,
  originOf,
  reasonsOf,
  suppressionData,
  suppressionEvent,
  suppressionId,
} from '../../lambdas/domain/suppressions';
import {
  attemptNumber,
  attemptPage,
  oneOf,
  webhookEventAttempts,
  webhookEventStatus,
  webhookStatus,
} from '../../lambdas/domain/webhooks/resend-view';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("a webhook under Resend's names", () => {
  it('status is enabled while active, disabled otherwise', () => {
    expect(webhookStatus(true)).toBe('enabled');
    expect(webhookStatus(false)).toBe('disabled');
  });

  it('oneOf takes either name, both when equal, and refuses two that differ', () => {
    expect(oneOf('a', undefined)).toEqual({ value: 'a' });
    expect(oneOf(undefined, 'a')).toEqual({ value: 'a' });
    expect(oneOf('a', 'a')).toEqual({ value: 'a' });
    expect(oneOf(undefined, undefined)).toEqual({ value: undefined });
    expect(oneOf(true, false)).toBeNull();
  });
});

describe('a delivery as a Resend webhook event', () => {
  it('success, failed, attempting while a claim holds, pending otherwise', () => {
    expect(webhookEventStatus({ status: 'succeeded' }, T0)).toBe('success');
    expect(webhookEventStatus({ status: 'failed' }, T0)).toBe('failed');
    expect(webhookEventStatus({ status: 'pending', claim: { until: T0 + 1 } }, T0)).toBe('attempting');
    expect(webhookEventStatus({ status: 'pending', claim: { until: T0 } }, T0)).toBe('pending');
    expect(webhookEventStatus({ status: 'pending' }, T0)).toBe('pending');
  });

  const delivery = {
    id: 'dlv_abc',
    response: 'thanks',
    attemptLog: [
      { at: T0, statusCode: 503, error: 'HTTP 503' },
      { at: T0 + 1000, statusCode: null, error: 'timed out after 10 s' },
      { at: T0 + 2000, statusCode: 200, error: null },
    ],
  };

  it('lists attempts newest first, numbered from 1; only the latest shows the answer, earlier ones their error', () => {
    expect(webhookEventAttempts(delivery)).toEqual([
      { id: 'dlv_abc-3', http_status_code: 200, response: 'thanks', sent_at: new Date(T0 + 2000).toISOString() },
      {
        id: 'dlv_abc-2',
        http_status_code: 0,
        response: 'timed out after 10 s',
        sent_at: new Date(T0 + 1000).toISOString(),
      },
      { id: 'dlv_abc-1', http_status_code: 503, response: 'HTTP 503', sent_at: new Date(T0).toISOString() },
    ]);
  });

  it('pages attempts after an attempt id, and refuses an id of another delivery', () => {
    const attempts = webhookEventAttempts(delivery);
    expect(attemptPage('dlv_abc', attempts, 2)).toEqual({ data: attempts.slice(0, 2), hasMore: true });
    expect(attemptPage('dlv_abc', attempts, 2, 'dlv_abc-2')).toEqual({ data: attempts.slice(2), hasMore: false });
    expect(attemptPage('dlv_abc', attempts, 2, 'dlv_abc-1')).toEqual({ data: [], hasMore: false });
    expect(attemptPage('dlv_abc', attempts, 2, 'dlv_other-1')).toBeNull();
    expect(attemptNumber('dlv_abc', 'dlv_abc-07')).toBeNull();
  });
});

describe('a suppression under Resend’s names', () => {
  it('its id is its address, reversibly, and only the canonical encoding names one', () => {
    const id = suppressionId('ada@example.com');
    expect(id).toBe('sup_YWRhQGV4YW1wbGUuY29t');
    expect(addressOfSuppressionId(id)).toBe('ada@example.com');
    expect(addressOfSuppressionId('sup_bm90LWFuLWFkZHJlc3M')).toBeNull(); // "not-an-address": no @
    expect(addressOfSuppressionId('ada@example.com')).toBeNull();
    expect(addressOfSuppressionId(`${id}=`)).toBeNull();
  });

  it('maps reasons onto origins (an unsubscribe is manual) and back', () => {
    expect(originOf('hard_bounce')).toBe('bounce');
    expect(originOf('complaint')).toBe('complaint');
    expect(originOf('unsubscribe')).toBe('manual');
    expect(originOf('manual')).toBe('manual');
    expect(reasonsOf('manual')).toEqual(['unsubscribe', 'manual']);
    expect(reasonsOf('bounce')).toEqual(['hard_bounce']);
  });

  it("its events carry Resend's suppression fields and Sendflow's reason", () => {
    const suppression = {
      address: 'ada@example.com',
      reason: 'hard_bounce' as const,
      createdAt: '2026-01-01T12:00:00.000Z',
      emailId: 'email_01',
    };
    expect(suppressionData(suppression)).toEqual({
      id: 'sup_YWRhQGV4YW1wbGUuY29t',
      email: 'ada@example.com',
      origin: 'bounce',
      reason: 'hard_bounce',
      source_id: 'email_01',
      created_at: '2026-01-01T12:00:00.000Z',
    });
    const event = suppressionEvent(
      'suppression.added',
      { accountId: 'acct_1', mode: 'test' },
      suppression,
      T0,
      (n) => new Uint8Array(n),
    );
    expect(event).toMatchObject({ type: 'suppression.added', accountId: 'acct_1', mode: 'test' });
    expect(event.emailId).toBeUndefined();
    expect(event.data).toEqual(suppressionData(suppression));
  });
});
