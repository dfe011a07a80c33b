// The part of the AWS wiring every function shares, the authorizer included: configuration parsed once,
// the Powertools logger and one DynamoDB client per cold start. Kept apart from services.ts so the
// authorizer's bundle does not carry the pipeline's adapters (esbuild keeps modules with top-level schemas).
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Config, loadConfig } from '../config';
import { createLogger } from '../logger';

export interface AwsBase {
  readonly config: Config;
  readonly logger: Logger;
  readonly dynamo: DynamoDBClient;
}

/** Configuration, logger and the DynamoDB client: all the authorizer needs. */
export function createAwsBase(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
  dynamo?: DynamoDBClient,
): AwsBase {
  const config = loadConfig(env);
  return { config, logger: createLogger(config, serviceName), dynamo: dynamo ?? new DynamoDBClient({}) };
}
