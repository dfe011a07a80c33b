// Lambda entry point of the delivery worker (deliveries queue → one attempt each; retries through SQS delays
// or Scheduler): wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createDeliveryWorkerHandler } from '../../handlers/queue/delivery-worker';
import { createAwsServices } from './services';

const services = await createAwsServices('sendflow-delivery', { retries: 'scheduler' });

export const handler = middy(createDeliveryWorkerHandler(services)).use(
  injectLambdaContext(services.logger, { resetKeys: true }),
);
