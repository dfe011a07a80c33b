// The per-endpoint rate limit's rule (lambdas/domain/webhooks/pace.ts) and each worker's line of paced jobs
// (lambdas/app/webhooks/pace.ts), on a fake clock: never more than N starts in any second, whatever the
// placement of the window; turns a spacing apart across processes; far turns go back to the queue with the job,
// near ones wait in place.
import { describe, expect, it } from 'vitest';
import { InMemoryPaceCounter } from '../../lambdas/adapters/in-process/pace-counter';
import { EndpointPace, type PaceCounter } from '../../lambdas/app/webhooks/pace';
import {
  mostInAnyWindow,
  PACE_WINDOW_MS,
  paceSpacingMs,
  reservePace,
  takePace,
} from '../../lambdas/domain/webhooks/pace';
import { FakeClock } from '../support/fakes';

describe('takePace', () => {
  it('grants a first start and sets the next a spacing later; refuses before it, grants on it', () => {
    expect(takePace(undefined, 1_000, 210)).toEqual({ take: { granted: true }, nextAt: 1_210 });
    expect(takePace(1_210, 1_209, 210)).toEqual({ take: { granted: false, nextAt: 1_210 }, nextAt: 1_210 });
    expect(takePace(1_210, 1_210, 210)).toEqual({ take: { granted: true }, nextAt: 1_420 });
  });

  it('spaces starts so that N+1 of them span more than a second (5% headroom for jitter)', () => {
    for (const perSecond of [1, 5, 7, 100, 1_000]) {
      expect(paceSpacingMs(perSecond) * perSecond).toBeCloseTo(PACE_WINDOW_MS);
      expect(PACE_WINDOW_MS).toBeGreaterThan(1_000);
    }
  });

  it('holds "at most N in any second" for starts made as soon as granted', () => {
    for (const perSecond of [1, 3, 5, 50]) {
      let nextAt: number | undefined;
      const starts: number[] = [];
      // Requests knock every 7 ms for 5 s; each granted one starts then.
      for (let now = 0; now < 5_000; now += 7) {
        const decided = takePace(nextAt, now, paceSpacingMs(perSecond));
        nextAt = decided.nextAt;
        if (decided.take.granted) starts.push(now);
      }
      expect(mostInAnyWindow(starts)).toBeLessThanOrEqual(perSecond);
      expect(starts.length).toBeGreaterThanOrEqual(Math.floor((perSecond * 5_000) / PACE_WINDOW_MS));
    }
  });
});

describe('reservePace', () => {
  it('hands out now when idle, then the horizon, a spacing apart, never the same turn twice', () => {
    expect(reservePace(undefined, 1_000, 210)).toEqual({ turn: 1_000, horizon: 1_210 });
    expect(reservePace(1_210, 1_050, 210)).toEqual({ turn: 1_210, horizon: 1_420 });
    // A horizon already passed: the endpoint was idle; the turn is now.
    expect(reservePace(1_420, 5_000, 210)).toEqual({ turn: 5_000, horizon: 5_210 });
  });
});

describe('mostInAnyWindow', () => {
  it('counts a half-open window placed anywhere', () => {
    expect(mostInAnyWindow([0, 200, 400, 600, 800, 1_000])).toBe(5);
    expect(mostInAnyWindow([0, 200, 400, 600, 800, 999])).toBe(6);
    expect(mostInAnyWindow([])).toBe(0);
  });
});

/** A clock whose sleeps advance it (no real waiting): for jobs handled one after another. */
function timeline() {
  const clock = new FakeClock(1_790_000_000_000);
  const sleep = async (ms: number) => clock.advance(ms);
  return { clock, sleep };
}

const job = (webhookId = 'wh_paced', paceTurn?: number) => ({
  webhookId,
  ...(paceTurn !== undefined ? { paceTurn } : {}),
});

describe('EndpointPace', () => {
  it('lets a burst start at most N a second, all of it, waiting in place when told to', async () => {
    // Arrange
    const { clock, sleep } = timeline();
    const pace = new EndpointPace(
      new InMemoryPaceCounter(),
      clock,
      { waitInPlaceMs: 60_000, wholeSeconds: false },
      sleep,
    );
    const starts: number[] = [];

    // Act: 20 jobs one after another, each admitted then started.
    for (let n = 0; n < 20; n++) {
      expect(await pace.admit(job(), 5)).toEqual({ kind: 'go' });
      await pace.start('wh_paced', 5);
      starts.push(clock.now());
    }

    // Assert
    expect(starts).toHaveLength(20);
    expect(mostInAnyWindow(starts)).toBe(5);
  });

  it('sends far turns back to the queue with the delay to their turn and the turn itself, which it keeps', async () => {
    // Arrange: four jobs at once.
    const clock = new FakeClock(1_790_000_000_000);
    const t0 = clock.now();
    const pace = new EndpointPace(new InMemoryPaceCounter(), clock, { waitInPlaceMs: 0, wholeSeconds: false });
    const spacing = paceSpacingMs(5);

    // Act
    const admissions = [];
    for (let n = 0; n < 4; n++) admissions.push(await pace.admit(job(), 5));

    // Assert: the first goes, the others come back a spacing apart, each with its turn.
    expect(admissions).toEqual([
      { kind: 'go' },
      { kind: 'later', delaySeconds: spacing / 1000, turn: t0 + spacing },
      { kind: 'later', delaySeconds: (2 * spacing) / 1000, turn: t0 + 2 * spacing },
      { kind: 'later', delaySeconds: (3 * spacing) / 1000, turn: t0 + 3 * spacing },
    ]);
    // The second comes back on its turn: it goes, taking no new turn; a new job lines up after the last one.
    clock.advance(spacing);
    expect(await pace.admit(job('wh_paced', t0 + spacing), 5)).toEqual({ kind: 'go' });
    expect(await pace.admit(job(), 5)).toEqual({
      kind: 'later',
      delaySeconds: (3 * spacing) / 1000,
      turn: t0 + 4 * spacing,
    });
  });

  it('on SQS (whole seconds) sends a job back for the whole seconds before its turn and waits the rest here', async () => {
    // Arrange
    const clock = new FakeClock(1_790_000_000_000);
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const pace = new EndpointPace(
      new InMemoryPaceCounter(),
      clock,
      { waitInPlaceMs: 1_000, wholeSeconds: true },
      sleep,
    );

    // Act: 12 jobs at once, paced at 5 a second (turns 210 ms apart: the 12th at 2,310 ms).
    const admissions = await Promise.all(Array.from({ length: 12 }, () => pace.admit(job(), 5)));

    // Assert: turns within a second wait here; later ones go back for floor(turn) seconds, never past their turn.
    expect(admissions.filter((a) => a.kind === 'go')).toHaveLength(5);
    expect(waits).toEqual([210, 420, 630, 840]);
    expect(admissions.slice(5).map((a) => (a.kind === 'later' ? a.delaySeconds : null))).toEqual([1, 1, 1, 1, 1, 2, 2]);
  });

  it('gives two processes sharing one counter interleaved turns, and their starts never more than N a second', async () => {
    // Arrange: two processes, one counter (as two Lambda instances on one DynamoDB item).
    const { clock, sleep } = timeline();
    const counter = new InMemoryPaceCounter();
    const takes: boolean[] = [];
    const recording: PaceCounter = {
      reserve: (...args) => counter.reserve(...args),
      take: async (...args) => {
        const take = await counter.take(...args);
        takes.push(take.granted);
        return take;
      },
    };
    const options = { waitInPlaceMs: 60_000, wholeSeconds: false };
    const [a, b] = [
      new EndpointPace(recording, clock, options, sleep),
      new EndpointPace(recording, clock, options, sleep),
    ];
    const starts: number[] = [];

    // Act: each process admits and starts 5 jobs, interleaved.
    for (let n = 0; n < 5; n++) {
      for (const process of [a, b]) {
        await process.admit(job('wh_shared'), 2);
        await process.start('wh_shared', 2);
        starts.push(clock.now());
      }
    }

    // Assert: 10 starts, never more than 2 in a second across both, none refused (the turns spaced them).
    expect(mostInAnyWindow(starts)).toBe(2);
    expect(takes).toEqual(Array(10).fill(true));
  });

  it('paces each webhook alone: another webhook is never held back', async () => {
    const clock = new FakeClock(1_790_000_000_000);
    const pace = new EndpointPace(new InMemoryPaceCounter(), clock, { waitInPlaceMs: 0, wholeSeconds: false });
    await pace.admit(job('wh_a'), 1);
    expect((await pace.admit(job('wh_a'), 1)).kind).toBe('later');
    expect(await pace.admit(job('wh_b'), 1)).toEqual({ kind: 'go' });
  });
});
