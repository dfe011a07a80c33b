// The authorizer cache on AWS: API Gateway keeps each REQUEST-authorizer answer for its TTL; flushing the
// stage's cache makes a revoked key (or a changed plan) take effect at once. Flushing is per stage, so every
// key is re-authorized once afterwards: fine for events as rare as revocations and plan changes.
import { type APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import type { AuthorizerCache } from '../../app/ports';

export class ApiGatewayAuthorizerCache implements AuthorizerCache {
  constructor(
    private readonly client: APIGatewayClient,
    private readonly restApiId: string,
    private readonly stageName: string,
  ) {}

  async flush(): Promise<void> {
    await this.client.send(
      new FlushStageAuthorizersCacheCommand({ restApiId: this.restApiId, stageName: this.stageName }),
    );
  }
}
