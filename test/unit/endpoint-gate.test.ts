// Isolation rules (DESIGN §4): which outcomes mark an endpoint slow (lambdas/domain/webhooks/endpoint-health.ts)
// and the shared lane's door (lambdas/app/webhooks/endpoint-gate.ts): a share of attempts per endpoint in
// flight, none from an endpoint slow in the last minute, on a fake clock.
import { describe, expect, it } from 'vitest';
import { EndpointGate } from '../../lambdas/app/webhooks/endpoint-gate';
import { AWS_LANE_POLICY, isSlowOutcome, LANE_POLICY } from '../../lambdas/domain/webhooks/endpoint-health';
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

/** An endpoint (webhook) of its own account, unless told otherwise. */
const at = (endpoint: string, account = `acct_${endpoint}`) => ({ account, endpoint });

describe('EndpointGate', () => {
  const policy = { perEndpoint: 2, busyWaitMs: 0, busyDelaySeconds: 1, slowAfterMs: 1_000, slowForMs: 60_000 };

  it('lets in perEndpoint attempts per endpoint (busy past that), each endpoint counted apart', () => {
    const gate = new EndpointGate(policy, new FakeClock(0));
    const [first, second, third] = [gate.enter(at('a')), gate.enter(at('a')), gate.enter(at('a'))];
    expect([first?.kind, second?.kind, third.kind]).toEqual(['go', 'go', 'busy']);
    expect(gate.enter(at('b')).kind).toBe('go');
    if (first.kind === 'go') gate.leave(at('a'), first.ticket, attempt(5));
    expect(gate.enter(at('a')).kind).toBe('go');
  });

  it('keeps a slow endpoint out for slowForMs after a slow outcome, then lets it back', () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    const door = gate.enter(at('a'));
    clock.advance(5_000);
    if (door.kind === 'go') gate.leave(at('a'), door.ticket, attempt(5_000, null));
    clock.advance(59_999);
    expect(gate.enter(at('a')).kind).toBe('slow');
    clock.advance(1);
    expect(gate.enter(at('a')).kind).toBe('go');
  });

  it('finds a hanging endpoint by its oldest request in flight, before that request ends', () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    gate.enter(at('a'));
    void gate.timed('a', () => new Promise(() => {}));
    clock.advance(999);
    expect(gate.enter(at('a')).kind).toBe('go');
    clock.advance(1);
    expect(gate.enter(at('a')).kind).toBe('slow');
    expect(gate.enter(at('b')).kind).toBe('go');
  });

  it("times the endpoint's request only: our own writes around it (a claim, a record) never mark it slow", async () => {
    // Arrange: an attempt let in, whose claim takes 5 s on a loaded machine before its request starts.
    const clock = new FakeClock(0);
    const gate = new EndpointGate({ ...policy, perEndpoint: 10 }, clock);
    gate.enter(at('a'));
    clock.advance(5_000);
    expect(gate.enter(at('a')).kind).toBe('go');

    // Act: the request answers in 10 ms; then its record takes 5 s more.
    await gate.timed('a', async () => clock.advance(10));
    clock.advance(5_000);

    // Assert
    expect(gate.enter(at('a')).kind).toBe('go');
  });

  it('learns from the slow lane too: a slow outcome seen there renews the mark; none (a skip) changes nothing', () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    gate.observe('a', attempt(3_000));
    clock.advance(50_000);
    gate.observe('a', attempt(3_000));
    clock.advance(50_000);
    expect(gate.enter(at('a')).kind).toBe('slow');
    gate.observe('b');
    expect(gate.enter(at('b')).kind).toBe('go');
  });

  it("enterWhenFree lets a busy endpoint's job in when one of its young attempts ends; never waits on an old one", async () => {
    const clock = { now: () => Date.now() };
    const gate = new EndpointGate({ ...policy, perEndpoint: 1, busyWaitMs: 50 }, clock);
    const first = gate.enter(at('a'));
    const waiting = gate.enterWhenFree(at('a'));
    if (first.kind === 'go') gate.leave(at('a'), first.ticket, attempt(5));
    expect((await waiting).kind).toBe('go');

    // The attempt in flight is now 50 ms old: a new job does not wait for it.
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    expect((await gate.enterWhenFree(at('a'))).kind).toBe('busy');
    expect(Date.now() - started).toBeLessThan(20);
  });

  it("shares by account (two webhooks at one host count together), and a slow webhook leaves the account's others in", () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    expect([gate.enter(at('w1', 'acct')).kind, gate.enter(at('w2', 'acct')).kind]).toEqual(['go', 'go']);
    expect(gate.enter(at('w3', 'acct')).kind).toBe('busy');
    expect(gate.enter(at('w1', 'other')).kind).toBe('go');

    gate.observe('w1', attempt(5_000, null));

    expect(gate.enter(at('w1', 'acct')).kind).toBe('slow');
    expect(gate.enter(at('w3', 'acct')).kind).toBe('busy');
  });
});

describe('EndpointGate on AWS (issue 29: one batch per container, SQS fair queues share the lane)', () => {
  const policy = { ...AWS_LANE_POLICY, slowAfterMs: 1_000 };

  it('lets every job of an account in at once: no share per container, so nothing goes round the queue', () => {
    const gate = new EndpointGate(policy, new FakeClock(0));
    const answers = Array.from({ length: 100 }, () => gate.enter(at('w1', 'acct')).kind);
    expect(new Set(answers)).toEqual(new Set(['go']));
  });

  it('marks an endpoint slow on a share of its outcomes, not on its p99: a batch of 500 with 3% slow stays', () => {
    // Arrange: a bad day's busy endpoint: 16 of a batch's 500 answers past slowAfterMs, the slowest ending last.
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);

    // Act & Assert
    for (let i = 0; i < 484; i++) gate.observe('a', attempt(300));
    for (let i = 0; i < 16; i++) gate.observe('a', attempt(i < 3 ? 10_000 : 3_000, i < 3 ? null : 200));
    expect(gate.enter(at('a')).kind).toBe('go');
  });

  it('marks a low-traffic endpoint on its quorum of slow outcomes when they are its share', () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    const { slowQuorum = 1 } = policy;
    for (let i = 0; i < slowQuorum - 1; i++) gate.observe('a', attempt(10_000, null));
    expect(gate.enter(at('a')).kind).toBe('go');
    gate.observe('a', attempt(300));
    gate.observe('a', attempt(10_000, null));
    expect(gate.enter(at('a')).kind).toBe('slow');
    clock.advance(policy.slowForMs);
    expect(gate.enter(at('a')).kind).toBe('go');
  });

  it('forgets what it saw a window ago: old slow outcomes do not add up with new ones', () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    const { slowQuorum = 1, slowWindowMs = 0 } = policy;
    for (let i = 0; i < slowQuorum - 1; i++) gate.observe('a', attempt(10_000, null));
    clock.advance(slowWindowMs);
    gate.observe('a', attempt(10_000, null));
    expect(gate.enter(at('a')).kind).toBe('go');
  });

  it("counts requests in flight for slowAfterMs toward the quorum: a hanging endpoint's batch marks it", () => {
    const clock = new FakeClock(0);
    const gate = new EndpointGate(policy, clock);
    const { slowQuorum = 1 } = policy;
    for (let i = 0; i < slowQuorum - 1; i++) void gate.timed('a', () => new Promise(() => {}));
    clock.advance(policy.slowAfterMs);
    expect(gate.enter(at('a')).kind).toBe('go');
    void gate.timed('a', () => new Promise(() => {}));
    clock.advance(policy.slowAfterMs);
    expect(gate.enter(at('a')).kind).toBe('slow');
  });

  it('sends a failing webhook to the slow lane: a streak of 3 failed deliveries with no success for 30 s', () => {
    const clock = new FakeClock(100_000);
    const gate = new EndpointGate(policy, clock);
    expect(gate.failing(null)).toBe(false);
    expect(gate.failing({ since: 70_000, failures: 3 })).toBe(true);
    expect(gate.failing({ since: 70_001, failures: 3 })).toBe(false);
    expect(gate.failing({ since: 0, failures: 2 })).toBe(false);
    expect(new EndpointGate(LANE_POLICY, clock).failing({ since: 0, failures: 10 })).toBe(false);
  });
});
