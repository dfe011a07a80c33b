// Public handlers of the API reference: GET /v1/openapi.json (the document) and GET /v1/reference (a static HTML
// page made from it). Both are built from the code once per container, on first use, and never change after.
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { PublicRouteHandler } from './context';
import { buildOpenApi, referenceResponses, servedFrom } from './openapi';
import { referencePage } from './reference-page';
import { reply } from './response';

/** Public, and the same for every caller until the next deploy: caches may keep it a few minutes. */
const CACHE = { 'Cache-Control': 'public, max-age=300' };

export function referenceHandlers() {
  let document: Record<string, unknown> | undefined;
  let page: APIGatewayProxyResult | undefined;
  const built = () => {
    document ??= buildOpenApi();
    return document;
  };
  // Built once; only `servers` is the request's own (the host and scheme it came through).
  const getOpenApi: PublicRouteHandler = async (request) =>
    reply(
      referenceResponses.getOpenApi,
      { ...built(), servers: servedFrom(request.headers) },
      { ...CACHE, 'Access-Control-Allow-Origin': '*', Vary: 'Host, X-Forwarded-Proto' },
    );
  const apiReference: PublicRouteHandler = async () => {
    page ??= referencePage(built());
    return { ...page, headers: { ...page.headers, ...CACHE } };
  };
  return { getOpenApi, apiReference };
}
