// Lambda entry point of the reconciler (an EventBridge Scheduler rate schedule): re-queues overdue pending
// attempts onto the deliveries queue and overdue scheduled sends onto the sends queue, and re-checks pending
// domains with SES. Wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createReconcilerHandler } from '../../handlers/queue/reconciler';
import { eventsQueue, queuedRetries, queuedSends } from './plugs/queues';
import { sesDomains } from './plugs/ses';
import { createAwsServices } from './services';

// Overdue attempts and sends are due now: the queues are enough, no Scheduler permissions. Pending domains are
// re-checked with SES; a change fires domain.updated.
const services = createAwsServices('sendflow-reconciler', [queuedRetries, queuedSends, sesDomains, eventsQueue]);

export const handler = middy(createReconcilerHandler(services)).use(
  injectLambdaContext(services.logger, { resetKeys: true }),
);
