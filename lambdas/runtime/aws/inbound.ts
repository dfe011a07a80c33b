// Lambda entry point of the inbound function (SES receipt rule → Lambda action, Event invocation): reads the
// message SES stored and hands it to receiveEmail. Wiring only, built once per cold start.
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { createInboundMailHandler, type InboundMessage } from '../../handlers/queue/inbound-mail';
import { ConfigError } from '../config';
import { loadAwsWiring } from './env';
import { inboundMessages, inboundRequires } from './plugs/inbound';
import { createAwsServices } from './services';

const SERVICE = 'sendflow-inbound';
const services = createAwsServices(SERVICE, []);
const wiring = loadAwsWiring(process.env);
const missing = inboundRequires(wiring).filter(([, value]) => !value);
if (missing.length) throw new ConfigError(missing.map(([name]) => `${name}: required by ${SERVICE}, not set`));

/**
 * receiveEmail (lambdas/app/inbound/receive-email.ts) is built by the local half of issue 19 and wired here at
 * merge, with its deps from `services`. Until then every event fails on purpose: Lambda retries it, then the
 * failures queue keeps it and alarms, and the message stays in the bucket to be replayed. Nothing is dropped.
 */
const receive = async (message: InboundMessage): Promise<never> => {
  throw new Error(`receiveEmail is not wired into ${SERVICE} yet: ${message.sourceId} kept for replay`);
};

export const handler = middy(
  createInboundMailHandler({ source: inboundMessages(wiring), receive, logger: services.logger }),
).use(injectLambdaContext(services.logger, { resetKeys: true }));
