// Lambda entry point of the API: wiring only. Configuration, logger and the DynamoDB client are built once
// per cold start; every invocation reuses them.
import { randomBytes } from 'node:crypto';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createApiHandler } from '../../handlers/http/api';
import { loadConfig } from '../config';
import { createLogger } from '../logger';
import { createRepositories } from '../repositories';

const config = loadConfig(process.env);
const logger = createLogger(config, 'sendflow-api');
const repositories = createRepositories(new DynamoDBClient({}), config.tables);

export const handler = createApiHandler(
  {
    ...repositories,
    clock: { now: () => Date.now() },
    random: randomBytes,
    logger,
    maxBodyBytes: config.maxBodyBytes,
    ipRateLimit: config.ipRateLimit,
  },
  // Request id, cold start and function name on every log line; keys appended per request are reset.
  [injectLambdaContext(logger, { resetKeys: true })],
);
