// Lambda entry point of the reconciler (an EventBridge Scheduler rate schedule): re-queues overdue pending
// attempts onto the deliveries queue. Wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createReconcilerHandler } from '../../handlers/queue/reconciler';
import { createAwsServices } from './services';

// Overdue attempts are due now: the queue is enough, no Scheduler permissions.
const services = createAwsServices('sendflow-reconciler', { retries: 'queue' });

export const handler = middy(createReconcilerHandler(services)).use(
  injectLambdaContext(services.logger, { resetKeys: true }),
);
