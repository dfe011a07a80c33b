// Lambda entry point of the REQUEST authorizer: wiring only, built once per cold start. It runs on every
// uncached request, so it takes the shared base (config, logger, DynamoDB) and only the two repositories it
// reads, not the whole service graph with its HTTP sender and queues.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createAuthorizerHandler } from '../../handlers/authorizer';
import { createRepositories } from '../repositories';
import { createAwsBase } from './base';

const { config, logger, dynamo } = createAwsBase('sendflow-authorizer');
const { accounts, apiKeys } = createRepositories(dynamo, config.tables);

export const handler = middy(createAuthorizerHandler({ accounts, apiKeys, logger })).use(
  injectLambdaContext(logger, { resetKeys: true }),
);
