// The email bodies plug (the API writes and reads bodies, the send worker reads them): small bodies in the
// emailParts table, larger ones in the stack's bucket (adapters/tiered-email-bodies.ts says where the line is
// and why); and the file store (attachments) in the same bucket, under the same emails/<id>/ prefix, so the
// functions' existing grants on that prefix cover it. Only the S3 client, with the bodies' own bounded timeouts.
import { S3Client } from '@aws-sdk/client-s3';
import { S3EmailBodyStore } from '../../../adapters/aws/s3-email-bodies';
import { S3FileStore } from '../../../adapters/aws/s3-files';
import { DynamoEmailBodyStore } from '../../../adapters/dynamodb/email-bodies';
import { TieredEmailBodyStore } from '../../../adapters/tiered-email-bodies';
import { documentClient } from '../../document-client';
import type { AwsPlug } from '../services';

export const emailBodies: AwsPlug = {
  requires: ({ wiring }) => [['SF_EMAIL_BODIES_BUCKET', wiring.emailBodiesBucket]],
  build: ({ config, wiring, dynamo, injected, now }) => {
    const s3 =
      injected(S3Client) ?? new S3Client({ requestHandler: { connectionTimeout: 1_000, requestTimeout: 5_000 } });
    const inline = new DynamoEmailBodyStore(documentClient(dynamo), config.tables.emailParts, now);
    const large = new S3EmailBodyStore(s3, String(wiring.emailBodiesBucket), {
      now,
      retentionSeconds: config.emailRetentionSeconds,
    });
    const files = new S3FileStore(s3, String(wiring.emailBodiesBucket), {
      now,
      retentionSeconds: config.emailRetentionSeconds,
    });
    return { emailBodies: new TieredEmailBodyStore(inline, large), files };
  },
};
