// The shared pace of paced webhooks (the delivery worker): one counter item per webhook in the rate-limits
// table, so the pace holds across Lambda instances. Only the DynamoDB client every function already has.
import { DynamoPaceCounter } from '../../../adapters/dynamodb/pace-counter';
import { SQS_PACE } from '../../../app/webhooks/pace';
import { documentClient } from '../../document-client';
import type { AwsPlug } from '../services';

export const sharedPace: AwsPlug = {
  requires: () => [],
  build: (ctx) => ({
    pace: {
      counter: new DynamoPaceCounter(documentClient(ctx.dynamo), ctx.config.tables.rateLimits),
      options: SQS_PACE,
    },
  }),
};
