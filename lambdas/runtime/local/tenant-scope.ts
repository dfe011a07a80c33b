// Which tenant the work in progress is for, carried through its awaits (AsyncLocalStorage), so the embedded
// DynamoDB's client can give each tenant its turn (FairTurns): one process serves every tenant locally, and a
// tenant's hundreds of calls must not queue ahead of another's few. Set where the runtime already knows it:
// the gateway (the caller's account) and the queues (each message's account).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SQSBatchResponse } from 'aws-lambda';
import type { QueueHandler } from '../../adapters/in-process/queue';

const scope = new AsyncLocalStorage<string>();

/** The tenant of the work in progress; '' for work no tenant caused (start-up, the reconciler). */
export const currentTenant = (): string => scope.getStore() ?? '';

/** Runs `work` (and all it awaits or starts) as `tenant`'s. */
export const asTenant = <T>(tenant: string, work: () => T): T => scope.run(tenant, work);

/**
 * A queue handler whose batch is handed on per tenant: the records of each tenant (by `tenantOf` their body) as
 * one invocation in that tenant's scope, all at once (records of a batch run in parallel anyway), their
 * failures merged. An invocation that throws fails its own records only, as a failed batch would.
 */
export function perTenant(handler: QueueHandler, tenantOf: (body: string) => string | undefined): QueueHandler {
  return async (event) => {
    const byTenant = new Map<string, typeof event.Records>();
    for (const record of event.Records) {
      const tenant = tenantOf(record.body) ?? '';
      byTenant.set(tenant, [...(byTenant.get(tenant) ?? []), record]);
    }
    const [only] = byTenant.keys();
    if (byTenant.size === 1) return asTenant(only as string, () => handler(event));
    const answers = await Promise.all(
      [...byTenant].map(([tenant, records]) =>
        asTenant(tenant, () => handler({ Records: records })).then(
          (answer) => answer?.batchItemFailures ?? [],
          () => records.map((record) => ({ itemIdentifier: record.messageId })),
        ),
      ),
    );
    return { batchItemFailures: answers.flat() } satisfies SQSBatchResponse;
  };
}
