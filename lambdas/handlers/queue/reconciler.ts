// Scheduled handler of the reconciler (EventBridge Scheduler, every minute on AWS; a timer locally): overdue
// retries and scheduled sends are re-queued, and pending domains are checked for verification.
import { checkPendingDomains, type DomainDeps } from '../../app/domains/domains';
import { type ReconcileDeps, reconcile } from '../../app/webhooks/reconcile';

export function createReconcilerHandler(deps: ReconcileDeps & DomainDeps & { graceSeconds: number }) {
  return async (): Promise<{ requeued: number; domainsChecked: number }> => ({
    requeued: await reconcile(deps, { graceMs: deps.graceSeconds * 1000 }),
    domainsChecked: await checkPendingDomains(deps),
  });
}
