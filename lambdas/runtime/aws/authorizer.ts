// Lambda entry point of the REQUEST authorizer: wiring only, built once per cold start. It runs on every
// uncached request, so it takes the shared base (config, logger, DynamoDB) and builds only the two repositories
// it reads: not the whole service graph, and not repositories.ts, whose other ten would ride along in the bundle.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { DynamoAccountRepository } from '../../adapters/dynamodb/accounts';
import { DynamoApiKeyRepository } from '../../adapters/dynamodb/api-keys';
import { createAuthorizerHandler } from '../../handlers/authorizer';
import { documentClient } from '../document-client';
import { createAwsBase } from './base';

const { config, logger, dynamo } = createAwsBase('sendflow-authorizer');
const doc = documentClient(dynamo);
const accounts = new DynamoAccountRepository(doc, config.tables.accounts);
const apiKeys = new DynamoApiKeyRepository(doc, config.tables.apiKeys);

export const handler = middy(createAuthorizerHandler({ accounts, apiKeys, logger })).use(
  injectLambdaContext(logger, { resetKeys: true }),
);
