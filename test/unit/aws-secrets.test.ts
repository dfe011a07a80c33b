// Unit tests for the signing secret on AWS (lambdas/adapters/aws/secrets.ts) against a mocked Secrets Manager:
// read on first use, cached for maxAge, a failed read not cached (that call is a 503, the next one reads
// again), concurrent callers sharing one read, and a failed refresh falling back to the value already read.
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { CachedSigningSecret, RETRY_AFTER_MS, SigningSecretError } from '../../lambdas/adapters/aws/secrets';
import { ServiceUnavailableError } from '../../lambdas/domain/errors';

const secrets = mockClient(SecretsManagerClient);
const FIRST = 'a'.repeat(64);
const ROTATED = 'b'.repeat(64);
const MAX_AGE_MS = 60_000;

function cachedSecret() {
  const clock = { ms: 1_000_000 };
  const secret = new CachedSigningSecret({
    client: new SecretsManagerClient({ region: 'eu-west-1' }),
    secretId: 'stage/signing-secret',
    maxAgeMs: MAX_AGE_MS,
    now: () => clock.ms,
  });
  return { secret, clock };
}

beforeEach(() => {
  secrets.reset();
});

describe('CachedSigningSecret', () => {
  it('reads nothing until first asked', () => {
    cachedSecret();
    expect(secrets).not.toHaveReceivedCommand(GetSecretValueCommand);
  });

  it('fails the first call when Secrets Manager fails, and reads again on the second, which succeeds', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).rejectsOnce(new Error('ThrottlingException')).resolves({ SecretString: FIRST });
    const { secret } = cachedSecret();

    // Act
    const first = await secret.value().catch((error: unknown) => error);
    const second = await secret.value();

    // Assert
    expect(first).toBeInstanceOf(SigningSecretError);
    expect(first).toBeInstanceOf(ServiceUnavailableError);
    expect(first).toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(second).toBe(FIRST);
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
    expect(secrets).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: 'stage/signing-secret' });
  });

  it('answers from its cache within maxAge; past it, answers the value it has at once and refreshes behind', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).resolvesOnce({ SecretString: FIRST }).resolves({ SecretString: ROTATED });
    const { secret, clock } = cachedSecret();

    // Act
    const read = await secret.value();
    clock.ms += MAX_AGE_MS - 1;
    const cached = await secret.value();
    const callsWithinMaxAge = secrets.commandCalls(GetSecretValueCommand).length;
    clock.ms += 1;
    const whileRefreshing = await secret.value();
    await settle();
    const refreshed = await secret.value();

    // Assert
    expect([read, cached, whileRefreshing, refreshed]).toEqual([FIRST, FIRST, FIRST, ROTATED]);
    expect(callsWithinMaxAge).toBe(1);
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('shares one read among concurrent callers', async () => {
    secrets.on(GetSecretValueCommand).resolves({ SecretString: FIRST });
    const { secret } = cachedSecret();
    const values = await Promise.all([secret.value(), secret.value(), secret.value()]);
    expect(values).toEqual([FIRST, FIRST, FIRST]);
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
  });

  it('keeps signing with the value it has when a refresh fails, and tries again only after RETRY_AFTER_MS', async () => {
    // Arrange
    secrets
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: FIRST })
      .rejectsOnce(new Error('InternalServiceError'))
      .resolves({ SecretString: ROTATED });
    const { secret, clock } = cachedSecret();

    // Act
    await secret.value();
    clock.ms += MAX_AGE_MS;
    const duringOutage = await secret.value();
    await settle();
    const rightAfter = await secret.value();
    const callsRightAfter = secrets.commandCalls(GetSecretValueCommand).length;
    clock.ms += RETRY_AFTER_MS;
    await secret.value();
    await settle();
    const afterOutage = await secret.value();

    // Assert
    expect([duringOutage, rightAfter]).toEqual([FIRST, FIRST]);
    expect(callsRightAfter).toBe(2);
    expect(afterOutage).toBe(ROTATED);
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 3);
  });

  it('refuses an empty or short secret, and does not cache the refusal', async () => {
    secrets.on(GetSecretValueCommand).resolvesOnce({ SecretString: 'short' }).resolves({ SecretString: FIRST });
    const { secret } = cachedSecret();
    await expect(secret.value()).rejects.toThrow(SigningSecretError);
    await expect(secret.value()).resolves.toBe(FIRST);
  });
});

/** Lets a background refresh (a few resolved promises) finish. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
}
