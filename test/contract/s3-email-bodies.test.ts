// The EmailBodyStore contract against the S3 adapter, its bucket a map behind aws-sdk-client-mock (no S3 runs
// here): with a 30-day retention, so bodies sent at once take the retention prefix and scheduled ones the plain key.
import { GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe } from 'vitest';
import { S3EmailBodyStore } from '../../lambdas/adapters/aws/s3-email-bodies';
import { emailBodyStoreContract } from './suites/email-body-store';

describe('S3EmailBodyStore (aws-sdk-client-mock holding the objects)', () => {
  const s3 = mockClient(S3Client);
  const objects = new Map<string, Uint8Array>();
  beforeAll(() => {
    s3.on(PutObjectCommand).callsFake((input: { Key: string; Body: Uint8Array }) => {
      objects.set(input.Key, Uint8Array.from(input.Body));
      return {};
    });
    s3.on(GetObjectCommand).callsFake((input: { Key: string }) => {
      const bytes = objects.get(input.Key);
      if (!bytes) throw new NoSuchKey({ message: 'The specified key does not exist.', $metadata: {} });
      return { Body: { transformToByteArray: async () => Uint8Array.from(bytes) } };
    });
  });
  afterAll(() => s3.restore());
  const client = new S3Client({ region: 'eu-west-1' });
  emailBodyStoreContract(
    (now) => new S3EmailBodyStore(client, 'bodies-bucket', { now, retentionSeconds: 30 * 86_400 }),
  );
});
