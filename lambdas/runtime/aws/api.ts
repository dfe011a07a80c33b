// Lambda entry point of the API: wiring only, built once per cold start; every invocation reuses it.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { createApiHandler } from '../../handlers/http/api';
import { flushTelemetry } from '../../handlers/middleware/flush-telemetry';
import { authorizerCache } from './plugs/authorizer-cache';
import { emailBodies } from './plugs/bodies';
import { awsDestinations } from './plugs/destinations';
import { signedLinks } from './plugs/links';
import { deliveriesQueue, eventsQueue, recoverySteps } from './plugs/queues';
import { scheduledSends } from './plugs/schedules';
import { sesDomains, sesNotices } from './plugs/ses';
import { createAwsServices } from './services';

// Emails are stored and queued here (the send worker hands them to SES); domains are SES identities. Links
// in emails are signed with the stack's secret, read on first use and cached (no AWS call at cold start: a
// Secrets Manager failure fails that request with a 503, not the container). Test sends and manual retries
// are synchronous attempts; a recovery job is started here and runs on the deliveries queue.
export const services = createAwsServices('sendflow-api', [
  eventsQueue,
  // A test send or manual retry answered 410 disables its webhook and fans webhook.disabled out (endpoint-watch).
  deliveriesQueue,
  recoverySteps,
  scheduledSends,
  signedLinks,
  sesDomains,
  authorizerCache,
  emailBodies,
  // A webhook a test send or manual retry disables is told to its account by e-mail (SF_NOTICE_FROM).
  sesNotices,
  // Test sends and manual retries to AWS destinations assume the customer's role here too.
  awsDestinations,
]);

export const handler = createApiHandler(
  services,
  // Request id, cold start and function name on every log line; keys appended per request are reset. The
  // request's metrics are published before the invocation ends.
  [injectLambdaContext(services.logger, { resetKeys: true }), flushTelemetry(services.telemetry, services.tracing)],
);
