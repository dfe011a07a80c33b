// What the SDK clients' default credential chain (@aws-sdk/credential-provider-node) becomes in the Lambda
// bundles (lib/constructs/node-function.ts aliases it here): Lambda hands every function its role's credentials
// in the environment, which is the chain's first link anyway; its other links (profiles, SSO, web identity,
// the instance metadata service and the STS and SSO clients they carry, about 100 KB) never answer on Lambda.
import type { AwsCredentialIdentity } from '@smithy/types';

/** The environment's credentials; rejects, naming the variables, when Lambda did not provide them. */
export function defaultProvider(_init?: unknown): () => Promise<AwsCredentialIdentity> {
  return async () => {
    const accessKeyId = process.env.AWS_ACCESS_KEY_ID;
    const secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY;
    if (!accessKeyId || !secretAccessKey) {
      throw new Error(
        'No AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (Lambda sets both).',
      );
    }
    const sessionToken = process.env.AWS_SESSION_TOKEN;
    const expiration = process.env.AWS_CREDENTIAL_EXPIRATION;
    return {
      accessKeyId,
      secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
      ...(expiration ? { expiration: new Date(expiration) } : {}),
    };
  };
}
