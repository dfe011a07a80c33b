// Scheduled handler of the reconciler (EventBridge Scheduler, every minute on AWS; a timer locally).
import { type ReconcileDeps, reconcile } from '../../app/webhooks/reconcile';

export function createReconcilerHandler(deps: ReconcileDeps & { graceSeconds: number }) {
  return async (): Promise<{ requeued: number }> => ({
    requeued: await reconcile(deps, { graceMs: deps.graceSeconds * 1000 }),
  });
}
