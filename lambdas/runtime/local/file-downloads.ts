// The local runtime's download route, standing in for S3 serving a presigned URL: GET <stage>/files/<token>
// answers the file the token names as an attachment of the type it names; a forged or malformed token is a 404
// and an expired one a 410, in the API's error shape. No API key: the signed token is the credential.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { DOWNLOAD_PATH, readDownloadToken } from '../../adapters/local/file-store';
import type { FileStore } from '../../app/files/ports';
import { contentDisposition } from '../../domain/content-disposition';
import { GoneError, MethodNotAllowedError, NotFoundError } from '../../domain/errors';
import { errorResponse } from '../../handlers/http/response';

export interface DownloadRouteOptions {
  readonly files: FileStore;
  readonly secret: () => Promise<string>;
  readonly now: () => number;
  /** The stage's path prefix, e.g. `/v1`. */
  readonly stagePrefix: string;
}

/** Answers the request if it is a download (true), else leaves it to the gateway (false). */
export function createDownloadRoute(options: DownloadRouteOptions) {
  const prefix = `${options.stagePrefix}${DOWNLOAD_PATH}`;
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (!path.startsWith(prefix)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return answer(res, errorResponse(new MethodNotAllowedError('Downloads are GET requests.', ['GET', 'HEAD'])));
    }
    const grant = readDownloadToken(path.slice(prefix.length), await options.secret());
    if (!grant) return answer(res, errorResponse(new NotFoundError('No such download link.')));
    if (grant.expiresAt * 1000 <= options.now()) {
      return answer(
        res,
        errorResponse(new GoneError('This download link has expired; ask the API for a new one.', 'link_expired')),
      );
    }
    const file = await options.files.get(grant.key);
    if (!file) return answer(res, errorResponse(new NotFoundError('The file is no longer stored.')));
    res.writeHead(200, {
      'Content-Type': grant.contentType,
      'Content-Length': String(file.bytes.byteLength),
      'Content-Disposition': contentDisposition(grant.filename),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : file.bytes);
    return true;
  };
}

function answer(res: ServerResponse, result: APIGatewayProxyResult): true {
  res.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body);
  return true;
}
