// Which account's request the code running now serves, carried through its awaits (AsyncLocalStorage): the local
// gateway sets it around each request it serves, and the embedded DynamoDB's calls of one account go to its thread a
// few at a time (accountStoreLanes). Work no request started (the queues' consumers, the reconciler) is the
// runtime's own, bounded by the queues' concurrency.
import { AsyncLocalStorage } from 'node:async_hooks';
import { KeyedSlots } from '../../adapters/in-process/keyed-slots';

const lanes = new AsyncLocalStorage<string>();

/** The lane of work no request started. */
export const RUNTIME_LANE = 'runtime';

/** Runs `task` as the account's: the store calls it makes, however deep, are that account's. */
export function inAccountLane<T>(accountId: string, task: () => T): T {
  return lanes.run(`account:${accountId}`, task);
}

/**
 * Runs `task` in the lane of a caller not yet known by account: the authorizer's reads of a key are that key's
 * (its hash), so one key's flood of requests is bounded like an account's.
 */
export function inCallerLane<T>(caller: string, task: () => T): T {
  return lanes.run(`caller:${caller}`, task);
}

/** The lane of the code running now: its account's (or caller's), or RUNTIME_LANE. */
export function currentLane(): string {
  return lanes.getStore() ?? RUNTIME_LANE;
}

/**
 * Where the embedded store's calls wait their turn: `run` bounds them per lane, `lane` names the caller's. Absent:
 * every call goes to the thread at once.
 */
export interface StoreLanes {
  run<T>(lane: string, task: () => Promise<T>): Promise<T>;
  lane(): string;
}

/**
 * At most `perLane` store calls of one account (or caller) in the embedded DynamoDB's thread at once, the others
 * waiting their turn in arrival order; the runtime's own work unbounded here. The thread interleaves the calls it
 * holds, so another tenant's call shares it with at most `perLane` of a flood's, however many that tenant made.
 */
export function accountStoreLanes(perLane: number): StoreLanes {
  const slots = new KeyedSlots(perLane);
  return {
    lane: currentLane,
    run: (lane, task) => (lane === RUNTIME_LANE ? task() : slots.run(lane, task)),
  };
}
