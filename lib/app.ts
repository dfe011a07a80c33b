// Assembles the Sendflow CDK app: the data stack, then the api stack that depends on it. bin/app.ts and
// the infrastructure tests both build the app through here, so tests check what deploys.
import type { App } from 'aws-cdk-lib';
import { SendflowApiStack } from './api-stack';
import { SendflowDataStack } from './data-stack';
import { stackNames } from './outputs';

export const CONTEXT_AUTHORIZER_CACHE_TTL = 'sendflow:authorizerCacheTtlSeconds';
const DEFAULT_AUTHORIZER_CACHE_TTL = 60;

export interface SendflowSettings {
  readonly authorizerCacheTtlSeconds: number;
}

/** Settings from CDK context (cdk.json, or `-c key=value`, which arrives as a string). */
export function settingsFromContext(app: App): SendflowSettings {
  const raw: unknown = app.node.tryGetContext(CONTEXT_AUTHORIZER_CACHE_TTL);
  if (raw === undefined) return { authorizerCacheTtlSeconds: DEFAULT_AUTHORIZER_CACHE_TTL };
  const ttl = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0 || ttl > 3600) {
    throw new Error(`Context ${CONTEXT_AUTHORIZER_CACHE_TTL} must be an integer from 0 to 3600, got ${String(raw)}`);
  }
  return { authorizerCacheTtlSeconds: ttl };
}

/** Environment-agnostic stacks: no account, no region, no lookups, so synth works offline. */
export function buildSendflow(app: App, settings: SendflowSettings = settingsFromContext(app)) {
  const data = new SendflowDataStack(app, stackNames.data, {
    description: 'Sendflow stateful resources: DynamoDB tables (retained)',
  });
  const api = new SendflowApiStack(app, stackNames.api, {
    description: 'Sendflow stateless resources: REST API, functions, usage plans, WAF',
    tableParameters: data.tableParameters,
    signingSecretName: data.signingSecretName,
    authorizerCacheTtlSeconds: settings.authorizerCacheTtlSeconds,
  });
  // Deploy order only: the api stack reads the data stack's SSM parameters, it imports nothing.
  api.addStackDependency(data, 'reads the table names the data stack publishes in SSM');
  return { data, api };
}
