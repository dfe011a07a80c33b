// PollRefusals (lambdas/runtime/local/poll-refusals.ts): the local gateway's refusal of listen polls past their
// account's open polls, from memory. A refusal is the API's answer (429 listen_polls_exceeded with the rate-limit
// headers, or the rate limit's own 429 once the window is full); a key is remembered while its account's polls stay
// full, at most 60 s, and forgotten by a flush; an account's refusals take one event-loop turn each.
import { describe, expect, it } from 'vitest';
import { InMemoryRateLimitCounter } from '../../lambdas/adapters/in-process/rate-limit-counter';
import { LISTEN_POLL_RETRY_SECONDS } from '../../lambdas/domain/listen';
import { PLANS } from '../../lambdas/domain/plans';
import { PollRefusals, REMEMBERED_KEY_MS } from '../../lambdas/runtime/local/poll-refusals';
import { FakeClock } from '../support/fakes';

const T0 = Date.UTC(2026, 11, 7, 12);
const FREE = { accountId: 'acct_a', plan: 'free' as const };

function setup(open = PLANS.free.listenPolls) {
  const clock = new FakeClock(T0);
  const polls = new Map([['acct_a', open]]);
  let flushes = 0;
  const refusals = new PollRefusals({
    openPolls: { count: (id) => polls.get(id) ?? 0 },
    counter: new InMemoryRateLimitCounter(),
    clock,
    generation: () => flushes,
  });
  return { clock, polls, refusals, flush: () => flushes++, generation: () => flushes };
}

describe('PollRefusals', () => {
  it("answers a full account's poll as the API would, with the rate-limit headers, and remembers its key", async () => {
    const s = setup();
    const answer = await s.refusals.refuse(FREE, 'hash_1', s.generation());
    expect(answer?.statusCode).toBe(429);
    expect(answer?.headers).toMatchObject({
      'Retry-After': String(LISTEN_POLL_RETRY_SECONDS),
      'X-RateLimit-Limit': String(PLANS.free.requestsPerSecond),
      'X-RateLimit-Remaining': String(PLANS.free.requestsPerSecond - 1),
    });
    expect(JSON.parse(answer?.body ?? '{}')).toMatchObject({ code: 'listen_polls_exceeded', status: 429 });
    expect(s.refusals.recall('hash_1')).toEqual(FREE);
  });

  it('past the rate window, answers the rate limit instead', async () => {
    const s = setup();
    const answers = [];
    for (let i = 0; i <= PLANS.free.requestsPerSecond; i++) answers.push(await s.refusals.refuse(FREE, 'h', 0));
    expect(JSON.parse(answers.at(-1)?.body ?? '{}').code).toBe('rate_limited');
    expect(answers.at(-1)?.headers?.['X-RateLimit-Remaining']).toBe('0');
  });

  it('serves (undefined) and forgets the key once a poll may open', async () => {
    const s = setup();
    await s.refusals.refuse(FREE, 'hash_1', 0);
    s.polls.set('acct_a', PLANS.free.listenPolls - 1);
    expect(await s.refusals.refuse(FREE, 'hash_1', 0)).toBeUndefined();
    expect(s.refusals.recall('hash_1')).toBeUndefined();
  });

  it('forgets a key after a flush (a key revoked, a plan changed) and after 60 s', async () => {
    const s = setup();
    await s.refusals.refuse(FREE, 'hash_1', 0);
    s.flush();
    expect(s.refusals.recall('hash_1')).toBeUndefined();
    // A result authorized before the flush is not remembered after it either.
    await s.refusals.refuse(FREE, 'hash_2', 0);
    expect(s.refusals.recall('hash_2')).toBeUndefined();
    await s.refusals.refuse(FREE, 'hash_3', s.generation());
    s.clock.advance(REMEMBERED_KEY_MS - 1);
    expect(s.refusals.recall('hash_3')).toEqual(FREE);
    s.clock.advance(1);
    expect(s.refusals.recall('hash_3')).toBeUndefined();
  });

  it("answers an account's burst one refusal per turn of the event loop, in arrival order", async () => {
    const s = setup();
    const order: string[] = [];
    const burst = Array.from({ length: 3 }, (_, i) =>
      s.refusals.refuse(FREE, `h${i}`, 0).then(() => order.push(`refusal ${i}`)),
    );
    // Other work queued now (another tenant's request) runs between the refusals, not after all of them.
    setImmediate(() => order.push('other'));
    await Promise.all(burst);
    expect(order.indexOf('other')).toBeLessThan(order.indexOf('refusal 1'));
    expect(order.filter((o) => o.startsWith('refusal'))).toEqual(['refusal 0', 'refusal 1', 'refusal 2']);
  });
});
