// Lambda entry point of the API: wiring only, built once per cold start; every invocation reuses it.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { createApiHandler } from '../../handlers/http/api';
import { flushTelemetry } from '../../handlers/middleware/flush-telemetry';
import { createAwsServices } from './services';

// Emails are stored and queued here (the send worker hands them to SES); domains are SES identities. Links
// in emails are signed with the stack's secret, read once here (top-level await: the cold start waits for
// it). Test sends and manual retries are synchronous attempts.
const services = await createAwsServices('sendflow-api', {
  events: true,
  sends: 'scheduler',
  links: true,
  domains: true,
});

export const handler = createApiHandler(
  services,
  // Request id, cold start and function name on every log line; keys appended per request are reset. The
  // request's metrics are published before the invocation ends.
  [injectLambdaContext(services.logger, { resetKeys: true }), flushTelemetry(services.telemetry)],
);
