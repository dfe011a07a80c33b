// The AWS wiring every Lambda entry point shares: configuration, logger and DynamoDB built once per cold start,
// then the same createServices as the local runtime with the AWS adapters the function names. Each adapter comes
// from a small plug module (runtime/aws/plugs/) that imports only its own SDK client, so a function's bundle
// carries the clients it uses and no other. A variable the plugs need that the stack did not set stops the cold
// start with every missing name listed, instead of a vague failure on the first message.

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LinkSigner, SendScheduler } from '../../app/emails/ports';
import type { AuthorizerCache } from '../../app/ports';
import type { DeliveryQueue, EventPublisher, RetryScheduler } from '../../app/webhooks/ports';
import { type Config, ConfigError } from '../config';
import { createServices, type RuntimeAdapters, type Services } from '../services';
import { createTracing } from '../tracing';
import { createAwsBase } from './base';
import { type AwsWiring, loadAwsWiring } from './env';

export { type AwsBase, createAwsBase } from './base';

/** What a plug is given: the parsed configuration and stack wiring, and the per-cold-start SDK clients. */
export interface PlugContext {
  readonly serviceName: string;
  readonly config: Config;
  readonly wiring: AwsWiring;
  readonly now: () => number;
  /** The cold start's DynamoDB client, for a plug whose adapter reads a table (the SES plug: domains' tracking). */
  readonly dynamo: DynamoDBClient;
  /** The one client of this type in this cold start (a test's injected one if given), made on first ask. */
  client<T extends object>(type: new (config: Record<string, never>) => T): T;
  /** The client of this type a test injected, if any (for a plug that needs its own client settings). */
  injected<T extends object>(type: abstract new (...args: never) => T): T | undefined;
}

/** One AWS adapter (or a few on one SDK client): the variables it needs, and how it is built from them. */
export interface AwsPlug {
  /** [variable, value] for every variable it needs; one without a value stops the cold start. */
  readonly requires: (
    ctx: Omit<PlugContext, 'client' | 'injected' | 'dynamo'>,
  ) => readonly (readonly [string, unknown])[];
  readonly build: (ctx: PlugContext) => Partial<RuntimeAdapters>;
}

/** Every problem at once: the variables the plugs require that the environment lacks. */
export function missingAwsVariables(
  plugs: readonly AwsPlug[],
  config: Config,
  wiring: AwsWiring = {},
  serviceName = 'this function',
): string[] {
  const context = { serviceName, config, wiring, now: Date.now };
  const missing = plugs.flatMap((plug) => plug.requires(context).filter(([, value]) => !value));
  return [...new Set(missing.map(([name]) => name))];
}

export interface AwsServicesOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** SDK clients, injectable for tests; by default one of each type per cold start. */
  readonly clients?: readonly object[];
}

/**
 * The function's services: createServices with the adapters its plugs build; every port no plug provides is a
 * stand-in that refuses to work, naming the function. Synchronous: no AWS call happens at cold start.
 */
export function createAwsServices(
  serviceName: string,
  plugs: readonly AwsPlug[],
  options: AwsServicesOptions = {},
): Services {
  const env = options.env ?? process.env;
  const injected = options.clients ?? [];
  const find = <T extends object>(type: abstract new (...args: never) => T): T | undefined =>
    injected.find((c): c is T => c instanceof type);
  const { config, logger, dynamo } = createAwsBase(serviceName, env, find(DynamoDBClient));
  const wiring = loadAwsWiring(env);
  const missing = missingAwsVariables(plugs, config, wiring, serviceName);
  if (missing.length) {
    throw new ConfigError(missing.map((name) => `${name}: required by ${serviceName}, not set`));
  }
  const made = new Map<unknown, object>();
  const context: PlugContext = {
    serviceName,
    config,
    wiring,
    now: () => Date.now(),
    dynamo,
    injected: find,
    client: (type) => {
      const existing = find(type) ?? made.get(type);
      if (existing) return existing as InstanceType<typeof type>;
      const created = new type({});
      made.set(type, created);
      return created;
    },
  };
  const adapters: RuntimeAdapters = {
    authorizerCache: unavailableCache(serviceName),
    deliveryQueue: unavailable(serviceName, 'deliveries queue'),
    recoveryQueue: unavailable(serviceName, 'deliveries queue'),
    retries: unavailable(serviceName, 'retry scheduler'),
    events: unavailable(serviceName, 'events queue'),
    sendScheduler: unavailable(serviceName, 'send scheduler'),
    links: unavailableLinks(serviceName),
    ...(wiring.receivingMx ? { receivingMx: wiring.receivingMx } : {}),
    // Spans named after the function (OTEL_SERVICE_NAME wins); off without OTEL_EXPORTER_OTLP_ENDPOINT.
    tracing: createTracing(config.tracing, serviceName),
    ...Object.assign({}, ...plugs.map((plug) => plug.build(context))),
  };
  return createServices(config, dynamo, logger, adapters);
}

/** A port this function was not given: any use is a wiring bug, reported as such. */
function unavailable(
  serviceName: string,
  port: string,
): DeliveryQueue & RetryScheduler & EventPublisher & SendScheduler {
  const refuse = () => Promise.reject(new Error(`The ${port} is not wired into ${serviceName} (see runtime/aws).`));
  return { send: refuse, schedule: refuse, publish: refuse, cancel: refuse, reschedule: refuse };
}

function unavailableCache(serviceName: string): AuthorizerCache {
  return {
    flush: () => Promise.reject(new Error(`The authorizer cache is not wired into ${serviceName} (see runtime/aws).`)),
  };
}

/** Links for a function that neither signs nor verifies them: reading the secret is a wiring bug. */
function unavailableLinks(serviceName: string): LinkSigner {
  const error = () => new Error(`The link signer is not wired into ${serviceName} (see runtime/aws).`);
  return {
    secret: () => Promise.reject(error()),
    baseUrl: () => {
      throw error();
    },
  };
}
