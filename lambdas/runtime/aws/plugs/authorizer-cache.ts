// The authorizer-cache plug (the API): revoking a key or changing a plan flushes API Gateway's cached authorizer
// answers for the stage. Only the API Gateway client.
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { ApiGatewayAuthorizerCache } from '../../../adapters/aws/authorizer-cache';
import { STAGE } from '../../../manifest';
import type { AwsPlug } from '../services';

export const authorizerCache: AwsPlug = {
  // The stack adds SF_REST_API_ID to the API function once the REST API exists.
  requires: ({ config }) => [['SF_REST_API_ID', config.aws.restApiId]],
  build: (ctx) => ({
    authorizerCache: new ApiGatewayAuthorizerCache(
      ctx.client(APIGatewayClient),
      String(ctx.config.aws.restApiId),
      STAGE,
    ),
  }),
};
