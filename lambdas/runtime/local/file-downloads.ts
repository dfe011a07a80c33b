// The local runtime's download route, standing in for S3 serving a presigned URL: GET <stage>/files/<token>
// answers the file the token names as an attachment of the type it names; a forged or malformed token is a 404
// and an expired one a 410, in the API's error shape. No API key: the signed token is the credential. The file
// is streamed (a 10 MB attachment is not held in memory per download), and served inert: a CSP sandbox with no
// sources and CORP same-origin, so an HTML or SVG attachment opened in a browser runs nothing on the runtime's
// origin (where the dashboard lives) and cannot be embedded elsewhere.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { DOWNLOAD_PATH, type LocalFileStore, readDownloadToken } from '../../adapters/local/file-store';
import { contentDisposition } from '../../domain/content-disposition';
import { GoneError, MethodNotAllowedError, NotFoundError } from '../../domain/errors';
import { errorResponse } from '../../handlers/http/response';

export interface DownloadRouteOptions {
  readonly files: LocalFileStore;
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
    const file = await options.files.open(grant.key);
    if (!file) return answer(res, errorResponse(new NotFoundError('The file is no longer stored.')));
    res.writeHead(200, {
      'Content-Type': grant.contentType,
      'Content-Length': String(file.size),
      'Content-Disposition': contentDisposition(grant.filename),
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'private, no-store',
    });
    if (req.method === 'HEAD') {
      file.stream.destroy();
      res.end();
      return true;
    }
    // A client gone mid-download ends the pipeline with an error: nothing to answer any more, the file is closed.
    await pipeline(file.stream, res).catch(() => res.destroy());
    return true;
  };
}

function answer(res: ServerResponse, result: APIGatewayProxyResult): true {
  res.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body);
  return true;
}
