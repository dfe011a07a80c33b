// The OpenAPI document, generated from the manifest's routes and the handlers' zod schemas, so the
// published contract cannot drift from the code (DESIGN §1). `npm run openapi` writes docs/openapi.json.
import * as z from 'zod';
import { type RouteSpec, routes, STAGE } from '../../manifest';
import { requestSchemas as apiKeys } from './api-keys';
import { requestSchemas as contacts } from './contacts';
import type { RequestSchemas } from './context';
import { requestSchemas as deliveries } from './deliveries';
import { requestSchemas as domains } from './domains';
import { requestSchemas as emails } from './emails';
import { requestSchemas as recoveries } from './recoveries';
import { requestSchemas as webhooks } from './webhooks';

const schemas: RequestSchemas = {
  ...apiKeys,
  ...webhooks,
  ...deliveries,
  ...recoveries,
  ...emails,
  ...domains,
  ...contacts,
};

const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });

const errorResponse = { $ref: '#/components/responses/Error' };

export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    // Dashboard pages are HTML for people, not API operations.
    if ((route as RouteSpec).dashboard) continue;
    const path = `/${STAGE}${route.path}`;
    const params = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const own = schemas[route.id];
    const query = own?.query ? jsonSchema(own.query) : undefined;
    const queryParams = Object.entries((query?.properties ?? {}) as Record<string, unknown>).map(([name, schema]) => ({
      name,
      in: 'query',
      required: false,
      schema,
    }));
    paths[path] = {
      ...paths[path],
      [route.method.toLowerCase()]: {
        operationId: route.id,
        summary: route.summary,
        ...(route.access === 'public' ? { security: [] } : {}),
        'x-sendflow-access': typeof route.access === 'string' ? route.access : route.access.scope,
        ...('idempotent' in route && route.idempotent ? { 'x-sendflow-idempotent': true } : {}),
        parameters: [
          ...params,
          ...queryParams,
          ...('idempotent' in route && route.idempotent
            ? [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }]
            : []),
        ],
        ...(own?.body
          ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(own.body) } } } }
          : {}),
        responses: {
          default: errorResponse,
          '2XX': { description: 'Success', headers: { $ref: '#/components/headers/RateLimit' } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sendflow API',
      version: STAGE,
      description: 'Generated from lambdas/manifest.ts and the handlers\u2019 zod schemas.',
    },
    servers: [{ url: 'http://127.0.0.1:3000' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'sf_live_… or sf_test_… API key' } },
      headers: {
        RateLimit: {
          'X-RateLimit-Limit': { schema: { type: 'integer' } },
          'X-RateLimit-Remaining': { schema: { type: 'integer' } },
          'X-RateLimit-Reset': { schema: { type: 'integer' }, description: 'Unix time (s) the window ends' },
        },
      },
      responses: {
        Error: {
          description: 'Every error: 400, 401, 403, 404, 405, 409, 413, 422, 429, 500',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['error', 'status', 'code'],
                properties: {
                  error: { type: 'string' },
                  status: { type: 'integer' },
                  code: { type: 'string' },
                  retry_after: { type: 'integer', description: 'On 429' },
                  details: {
                    type: 'array',
                    description: 'On 422',
                    items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}
