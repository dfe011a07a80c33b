// The local runtime's store lanes (lambdas/runtime/local/request-lane.ts): an account's store calls go to the
// embedded DynamoDB's thread at most `perLane` at a time, named by the request the gateway serves for it, however
// deep the calls; another account's go at once, and the runtime's own work (the queues) is not bounded here
// (issue 28: one tenant's burst of reads, another tenant's request).
import { describe, expect, it } from 'vitest';
import { accountStoreLanes, inAccountLane, RUNTIME_LANE } from '../../lambdas/runtime/local/request-lane';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('accountStoreLanes', () => {
  it("holds one account's calls to perLane at once, never another account's nor the runtime's", async () => {
    // Arrange: calls that stay in the thread until released, counted per lane while there.
    const lanes = accountStoreLanes(2);
    const inThread = new Map<string, number>();
    const release: (() => void)[] = [];
    const call = () => {
      const lane = lanes.lane();
      return lanes.run(lane, async () => {
        inThread.set(lane, (inThread.get(lane) ?? 0) + 1);
        await new Promise<void>((resolve) => release.push(resolve));
        inThread.set(lane, (inThread.get(lane) ?? 0) - 1);
      });
    };

    // Act: account a makes 10 calls from a request (through an await, as a use case would); b one; the runtime 5.
    const calls = [
      ...Array.from({ length: 10 }, () => inAccountLane('a', async () => call())),
      inAccountLane('b', () => call()),
      ...Array.from({ length: 5 }, () => call()),
    ];
    await tick();

    // Assert
    expect(inThread.get('account:a')).toBe(2);
    expect(inThread.get('account:b')).toBe(1);
    expect(inThread.get(RUNTIME_LANE)).toBe(5);
    while (release.length) {
      release.shift()?.();
      await tick();
      expect(inThread.get('account:a') ?? 0).toBeLessThanOrEqual(2);
    }
    await Promise.all(calls);
    expect(inThread.get('account:a')).toBe(0);
  });
});
