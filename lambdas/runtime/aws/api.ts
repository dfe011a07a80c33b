// Lambda entry point of the API: wiring only, built once per cold start; every invocation reuses it.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { createApiHandler } from '../../handlers/http/api';
import { createAwsServices } from './services';

// Emails publish their events; test sends and manual retries are synchronous attempts, no queue needed.
const services = createAwsServices('sendflow-api', { events: true });

export const handler = createApiHandler(
  services,
  // Request id, cold start and function name on every log line; keys appended per request are reset.
  [injectLambdaContext(services.logger, { resetKeys: true })],
);
