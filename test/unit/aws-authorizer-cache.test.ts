// The AWS authorizer cache adapter: one FlushStageAuthorizersCache for our REST API and stage.
import { APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { expect, it } from 'vitest';
import { ApiGatewayAuthorizerCache } from '../../lambdas/adapters/aws/authorizer-cache';

it('flushes the stage authorizer cache of the REST API', async () => {
  const apiGateway = mockClient(APIGatewayClient);
  apiGateway.on(FlushStageAuthorizersCacheCommand).resolves({});
  await new ApiGatewayAuthorizerCache(apiGateway as unknown as APIGatewayClient, 'abc123', 'v1').flush();
  expect(apiGateway).toHaveReceivedCommandTimes(FlushStageAuthorizersCacheCommand, 1);
  expect(apiGateway).toHaveReceivedCommandWith(FlushStageAuthorizersCacheCommand, {
    restApiId: 'abc123',
    stageName: 'v1',
  });
});
