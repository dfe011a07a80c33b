// AWS destinations (the delivery worker and the API's test sends and manual retries): the sender that assumes
// customers' roles and puts events on their buses and queues. Its own module, so only those bundles carry the
// STS and EventBridge clients.
import { AwsDestinationSender } from '../../../adapters/aws/destination-sender';
import type { AwsPlug } from '../services';

export const awsDestinations: AwsPlug = {
  requires: () => [],
  build: (ctx) => ({
    awsDestinations: new AwsDestinationSender({
      timeoutMs: ctx.config.webhooks.attemptTimeoutMs,
      region: ctx.config.webhooks.aws.region,
      ...(ctx.config.webhooks.aws.endpoint ? { endpoint: ctx.config.webhooks.aws.endpoint } : {}),
      now: ctx.now,
    }),
  }),
};
