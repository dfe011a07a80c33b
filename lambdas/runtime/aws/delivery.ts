// Lambda entry point of the delivery worker (the deliveries queue and the slow lane → one attempt each;
// retries through SQS delays or Scheduler; their DLQs → the delivery recorded failed): wiring only, built once
// per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { flushTelemetry } from '../../handlers/middleware/flush-telemetry';
import { createDeliveryWorkerHandler } from '../../handlers/queue/delivery-worker';
import { awsDestinations } from './plugs/destinations';
import { sharedPace } from './plugs/pace';
import { deadLetters, deliveriesQueue, recoverySteps, slowLane } from './plugs/queues';
import { scheduledRetries } from './plugs/schedules';
import { sesNotices } from './plugs/ses';
import { createAwsServices } from './services';

export const services = createAwsServices('sendflow-delivery', [
  scheduledRetries,
  slowLane,
  deliveriesQueue,
  recoverySteps,
  deadLetters,
  sharedPace,
  // A webhook auto-disabled here is told to its account by e-mail (SF_NOTICE_FROM).
  sesNotices,
  awsDestinations,
]);

export const handler = middy(createDeliveryWorkerHandler(services))
  .use(injectLambdaContext(services.logger, { resetKeys: true }))
  // The attempts' metrics are published before the invocation ends.
  .use(flushTelemetry(services.telemetry, services.tracing));
