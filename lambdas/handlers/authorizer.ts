// The REQUEST authorizer: Bearer key → Principal. Allow carries a wildcard resource so API Gateway's
// result cache (keyed by the Authorization header) is valid for every route, plus the account's usage-plan
// key; scopes are checked per route in the API Lambda, never in the cached policy.
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { type AuthenticateDeps, authenticate } from '../app/authenticate';
import { UnauthorizedError } from '../domain/errors';
import { toAuthorizerContext } from './authorizer-context';
import { headerValue } from './middleware/caller';

export function createAuthorizerHandler(deps: AuthenticateDeps & { logger: Logger }) {
  return async (event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const resource = wildcardResource(event.methodArn);
    try {
      const principal = await authenticate(deps, headerValue(event.headers, 'authorization'));
      return {
        principalId: principal.keyId,
        policyDocument: policy('Allow', resource),
        context: toAuthorizerContext(principal),
        ...(principal.usageKey ? { usageIdentifierKey: principal.usageKey } : {}),
      };
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      deps.logger.info('authorization denied', { reason: error.message });
      return { principalId: 'anonymous', policyDocument: policy('Deny', resource) };
    }
  };
}

/** arn:…:apiId/stage/METHOD/path → arn:…:apiId/stage/*\/* */
export function wildcardResource(methodArn: string): string {
  const [prefix, stage] = methodArn.split('/');
  return `${prefix}/${stage}/*/*`;
}

function policy(effect: 'Allow' | 'Deny', resource: string): APIGatewayAuthorizerResult['policyDocument'] {
  return { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }] };
}
