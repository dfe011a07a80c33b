// How S3 says a key is not there, in the one place the three S3 adapters (bodies, files, received messages) ask.
// A HEAD's answer has no body, so no error code: only its status says it (404, or 403 without s3:ListBucket).
// With s3:ListBucket on the bucket a GET of a missing key is 404 NoSuchKey; without it, 403 AccessDenied. Our
// roles may read every key under their prefixes and may list nothing, so for them a 403 AccessDenied means "not
// there"; a role that lost its grant reads the same, which docs/runbook.md says how to tell apart.
import { NoSuchKey, S3ServiceException } from '@aws-sdk/client-s3';

export function isMissingObject(error: unknown): boolean {
  if (error instanceof NoSuchKey) return true;
  return (
    error instanceof S3ServiceException && error.name === 'AccessDenied' && error.$metadata?.httpStatusCode === 403
  );
}

/** A HeadObject's miss: 404 (the SDK's NotFound) or a bare 403, the codeless answers S3 gives a HEAD. */
export function isMissingHead(error: unknown): boolean {
  if (!(error instanceof S3ServiceException)) return false;
  const status = error.$metadata?.httpStatusCode;
  return status === 404 || status === 403;
}
