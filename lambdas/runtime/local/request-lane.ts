// Which account's request the code running now serves, carried through its awaits (AsyncLocalStorage): the local
// gateway sets it around each request it serves, and the embedded DynamoDB's calls take their turn in that
// account's lane (FairLanes). Work no request started (the queues' consumers, the reconciler) has none.
import { AsyncLocalStorage } from 'node:async_hooks';

const lanes = new AsyncLocalStorage<string>();

/** Runs `task` as the account's: the store calls it makes, however deep, are that account's. */
export function inAccountLane<T>(accountId: string, task: () => T): T {
  return lanes.run(`account:${accountId}`, task);
}

/**
 * Runs `task` in the lane of a caller not yet known by account: the authorizer's reads of a key are that key's
 * (its hash), so one key's flood of requests takes turns with everyone else's rather than queueing ahead of them.
 */
export function inCallerLane<T>(caller: string, task: () => T): T {
  return lanes.run(`caller:${caller}`, task);
}

/** The lane of the code running now: its account's, or `runtime` for work no request started. */
export function currentLane(): string {
  return lanes.getStore() ?? 'runtime';
}
