// Lambda entry point of the REQUEST authorizer: wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import middy from '@middy/core';
import { createAuthorizerHandler } from '../../handlers/authorizer';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { createRepositories } from '../repositories';

const config = loadConfig(process.env);
const logger = createLogger(config, 'sendflow-authorizer');
const { accounts, apiKeys } = createRepositories(new DynamoDBClient({}), config.tables);

export const handler = middy(createAuthorizerHandler({ accounts, apiKeys, logger })).use(
  injectLambdaContext(logger, { resetKeys: true }),
);
