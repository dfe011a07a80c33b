// Isolation rules (DESIGN §4): which outcomes mark an endpoint slow (lambdas/domain/webhooks/endpoint-health.ts)
// and the shared lane's door (lambdas/app/webhooks/endpoint-gate.ts): a share of attempts per endpoint in
// flight, none from an endpoint slow in the last minute, on a fake clock.
import { describe, expect, it } from 'vitest';
import { EndpointGate } from '../../lambdas/app/webhooks/endpoint-gate';
import { isSlowOutcome, LANE_POLICY } from '../../lambdas/domain/webhooks/endpoint-health';
import { FakeClock } from '../support/fakes';

const attempt = (durationMs: number, statusCode: number | null = 200) => ({
  at: 0,
  statusCode,
  durationMs,
  error: statusCode === null ? 'timed out' : null,
});

describe('isSlowOutcome', () => {
  it('counts time held, not failure: a time-out or a slow answer is slow; a fast refusal or 500 is not', () => {
    expect(isSlowOutcome(attempt(10_000, null), LANE_POLICY)).toBe(true);
    expect(isSlowOutcome(attempt(LANE_POLICY.slowAfterMs, 200), LANE_POLICY)).toBe(true);
    expect(isSlowOutcome(attempt(LANE_POLICY.slowAfterMs - 1, 200), LANE_POLICY)).toBe(false);
    expect(isSlowOutcome(attempt(3, null), LANE_POLICY)).toBe(false);
    expect(isSlowOutcome(attempt(40, 500), LANE_POLICY)).toBe(false);
  });
});

describe('EndpointGate', () => {
  const policy = { perEndpoint: 2, slowAfterMs: 1_000, slowForMs: 60_000 };

  it('lets in perEndpoint attempts per endpoint, each endpoint counted apart, and one more after a leave', () => {
    const gate = new EndpointGate(policy, new FakeClock(0));
    expect([gate.enter('a'), gate.enter('a'), gate.enter('a')]).toEqual([true, true, false]);
    expect(gate.enter('b')).toBe(true);
    gate.leave('a', attempt(5));
    expect(gate.enter('a')).toBe(true);
  });

  it('keeps a slow endpoint out for slowForMs after a slow outcome, then lets it back', () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    gate.enter('a');
    gate.leave('a', attempt(5_000, null));
    clock.advance(59_999);
    expect(gate.enter('a')).toBe(false);
    clock.advance(1);
    expect(gate.enter('a')).toBe(true);
  });

  it('learns from the slow lane too: a slow outcome seen there renews the mark; none (a skip) changes nothing', () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    gate.observe('a', attempt(3_000));
    clock.advance(50_000);
    gate.observe('a', attempt(3_000));
    clock.advance(50_000);
    expect(gate.enter('a')).toBe(false);
    gate.observe('b');
    expect(gate.enter('b')).toBe(true);
  });
});
