// Lambda entry point of the send worker (sends queue → scheduled emails whose time has come go to the
// provider): wiring only, built once per cold start. The unsubscribe links were signed when the email was
// accepted, so the worker needs no signing secret.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { flushTelemetry } from '../../handlers/middleware/flush-telemetry';
import { createSendWorkerHandler } from '../../handlers/queue/send-worker';
import { emailBodies } from './plugs/bodies';
import { deliveriesQueue, eventsQueue, queuedSends } from './plugs/queues';
import { sesEmail } from './plugs/ses';
import { createAwsServices } from './services';

// Live mode goes through SES (a refused copy's email.failed goes through the email's outbox); test mode
// through the simulator, whose events also go onto the events queue. Each copy's email.sent is processed here
// (its deliveries go onto the deliveries queue); one it cannot finish goes to the events queue. An email of the
// batch it has no time left to start goes back onto the sends queue.
const services = createAwsServices('sendflow-sender', [
  eventsQueue,
  deliveriesQueue,
  queuedSends,
  sesEmail,
  emailBodies,
]);

export const handler = middy(createSendWorkerHandler(services))
  .use(injectLambdaContext(services.logger, { resetKeys: true }))
  // The sent and failed recipients' metrics are published before the invocation ends.
  .use(flushTelemetry(services.telemetry, services.tracing));
