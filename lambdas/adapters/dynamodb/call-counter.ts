// Counts DynamoDB calls per operation through an SDK middleware, for benchmarks and tests that budget calls.
// It sits in the initialize step, so one send() is one call whatever the retries; the DocumentClient shares
// its client's middleware stack, so lib-dynamodb commands are counted under their low-level names.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Calls per operation name without the `Command` suffix, e.g. `{ GetItem: 2, Query: 1 }`; per table, the
 * keys are `operation table`, e.g. `{ 'GetItem sendflow-accounts': 1, 'BatchGetItem sendflow-webhooks': 1 }` (a
 * batch call over several tables lists them all).
 */
export type CallSnapshot = Readonly<Record<string, number>>;

export interface CallCounts {
  /** The counts since the start or the last reset, per operation or per operation and table. */
  snapshot(options?: { byTable?: boolean }): CallSnapshot;
  /** Every call since the start or the last reset. */
  total(): number;
  reset(): void;
  /** Takes the middleware off the client; the counts stay readable. */
  detach(): void;
}

let counters = 0;

/** Starts counting the calls made through `client` (and any DocumentClient built from it). */
export function countCalls(client: Pick<DynamoDBClient, 'middlewareStack'>): CallCounts {
  let counts = new Map<string, number>(); // key: `operation table…`, or the operation alone
  // A unique name per counter: two counters on one client must not override each other.
  const name = `sendflowCallCounter${++counters}`;
  client.middlewareStack.add(
    (next, context) => (args) => {
      const operation = String(context.commandName ?? 'Unknown').replace(/Command$/, '');
      const key = [operation, ...tablesOf(args.input)].join(' ');
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name },
  );
  return {
    snapshot: ({ byTable = false } = {}) => {
      const result: Record<string, number> = {};
      for (const [key, n] of counts) {
        const label = byTable ? key : (key.split(' ')[0] as string); // table names cannot contain spaces
        result[label] = (result[label] ?? 0) + n;
      }
      return Object.freeze(Object.fromEntries(Object.entries(result).sort(([a], [b]) => a.localeCompare(b))));
    },
    total: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
    reset: () => {
      counts = new Map();
    },
    detach: () => {
      client.middlewareStack.remove(name);
    },
  };
}

/** The tables a call names: `TableName`, or the keys of a batch call's `RequestItems`. */
function tablesOf(input: unknown): string[] {
  const { TableName, RequestItems } = input as { TableName?: unknown; RequestItems?: unknown };
  if (typeof TableName === 'string') return [TableName];
  return RequestItems && typeof RequestItems === 'object' ? Object.keys(RequestItems).sort() : [];
}
