// The inbound plug (the inbound function): the messages SES's receipt rule stored, read from the inbound bucket.
// Only the S3 client, with timeouts sized for a message of up to 40 MB.
import { S3Client } from '@aws-sdk/client-s3';
import { S3RawMessageSource } from '../../../adapters/aws/s3-raw-messages';
import { INBOUND_OBJECTS_PREFIX, type RawMessageSource } from '../../../app/inbound/raw-messages';
import type { AwsWiring } from '../env';

/** The variables this needs, for the cold start's one list of what is missing. */
export const inboundRequires = (wiring: AwsWiring) => [['SF_INBOUND_BUCKET', wiring.inboundBucket]] as const;

export function inboundMessages(wiring: AwsWiring, client?: S3Client): RawMessageSource {
  const s3 = client ?? new S3Client({ requestHandler: { connectionTimeout: 1_000, requestTimeout: 30_000 } });
  return new S3RawMessageSource(s3, { bucket: String(wiring.inboundBucket), prefix: INBOUND_OBJECTS_PREFIX });
}
