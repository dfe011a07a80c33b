// Lambda entry point of the delivery worker (the deliveries queue and the slow lane → one attempt each;
// retries through SQS delays or Scheduler): wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createDeliveryWorkerHandler } from '../../handlers/queue/delivery-worker';
import { createAwsServices } from './services';

const services = await createAwsServices('sendflow-delivery', {
  retries: 'scheduler',
  slowLane: true,
  deliveryQueue: true,
});

export const handler = middy(createDeliveryWorkerHandler(services)).use(
  injectLambdaContext(services.logger, { resetKeys: true }),
);
