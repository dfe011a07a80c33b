// The link-signing plug (the API): the secret from Secrets Manager, read on first use and cached, and the public
// base URL. SF_SIGNING_SECRET, when set, wins and no Secrets Manager call is ever made. Only that client.
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CachedSigningSecret } from '../../../adapters/aws/secrets';
import type { AwsPlug } from '../services';

/** How long a warm container signs with the value it read: a rotated secret is picked up within this. */
export const SIGNING_SECRET_MAX_AGE_MS = 5 * 60_000;

export const signedLinks: AwsPlug = {
  requires: ({ config, wiring }) => [
    ['SF_SIGNING_SECRET_ID', wiring.signingSecretId ?? config.signingSecret],
    ['SF_PUBLIC_URL', config.publicUrl],
  ],
  build: ({ config, wiring, injected, now }) => {
    const baseUrl = String(config.publicUrl);
    const fixed = config.signingSecret;
    if (fixed !== undefined) return { links: { secret: () => Promise.resolve(fixed), baseUrl: () => baseUrl } };
    const secret = new CachedSigningSecret({
      // Bounded: a first read that hangs fails its request in seconds, not at the function's time-out.
      client:
        injected(SecretsManagerClient) ??
        new SecretsManagerClient({ requestHandler: { connectionTimeout: 1_000, requestTimeout: 3_000 } }),
      secretId: String(wiring.signingSecretId),
      maxAgeMs: SIGNING_SECRET_MAX_AGE_MS,
      now,
    });
    return { links: { secret: () => secret.value(), baseUrl: () => baseUrl } };
  },
};
