// The credential provider the Lambda bundles use instead of the SDK's default chain: the environment's
// credentials, as Lambda sets them, and a clear error when they are missing.
import { afterEach, expect, it, vi } from 'vitest';
import { defaultProvider } from '../../lambdas/runtime/aws/lambda-credentials';

afterEach(() => vi.unstubAllEnvs());

it("gives the environment's key, secret and session token, as Lambda sets them", async () => {
  // Arrange
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'ASIAEXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
  vi.stubEnv('AWS_SESSION_TOKEN', 'token');
  vi.stubEnv('AWS_CREDENTIAL_EXPIRATION', '');

  // Act
  const credentials = await defaultProvider({ profile: 'ignored' })();

  // Assert
  expect(credentials).toEqual({ accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'token' });
});

it('rejects, naming the variables, when the environment has no credentials', async () => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', '');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', '');
  await expect(defaultProvider()()).rejects.toThrow(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
});
