// The published OpenAPI document is the generated one (no drift), it validates as OpenAPI 3.1, and it describes
// every manifest route: its success status and body (from the schemas the handlers answer through), its errors,
// the rate-limit headers, and the request schemas the handlers validate with.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../lambdas/domain/events';
import { ERROR_CLASSES } from '../../lambdas/domain/webhooks/error-class';
import { eventCatalog } from '../../lambdas/handlers/http/event-catalog';
import { buildOpenApi, undocumentedRoutes } from '../../lambdas/handlers/http/openapi';
import { routes } from '../../lambdas/manifest';
import { openApiChecker } from '../support/openapi-check';

type Json = Record<string, unknown>;
interface Doc {
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; headers: Record<string, Json>; responses: Record<string, Json> };
}

const doc = buildOpenApi() as unknown as Doc;
const op = (method: string, path: string) => doc.paths[path]?.[method] as Json;
const responsesOf = (method: string, path: string) => op(method, path).responses as Record<string, Json>;
const jsonSchema = (response: Json | undefined) =>
  (response?.content as Record<string, { schema: Json }> | undefined)?.['application/json']?.schema;

/** Where a handler answers other than 200 (read from the handlers: creations 201, a started job 202). */
const STATUS: Record<string, number> = {
  createApiKey: 201,
  createWebhook: 201,
  createDomain: 201,
  createContact: 201,
  createTemplate: 201,
  // Resend's document: adding suppressions creates them (201), even an address already suppressed.
  addSuppression: 201,
  batchAddSuppressions: 201,
  startRecovery: 202,
  createListenSession: 201,
};

describe('docs/openapi.json', () => {
  it('is exactly what `npm run openapi` generates from the code', () => {
    const committed = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(buildOpenApi())));
  });

  it('leaves the dashboard pages out: they are HTML for people, not API operations', () => {
    expect(Object.keys(doc.paths).filter((path) => path.includes('/dashboard'))).toEqual([]);
  });

  it('is the same document on every build (deterministic)', () => {
    expect(JSON.stringify(buildOpenApi())).toBe(JSON.stringify(buildOpenApi()));
  });

  it('validates as OpenAPI 3.1 (swagger-parser, offline), every $ref resolving', async () => {
    await expect(SwaggerParser.validate(structuredClone(buildOpenApi()) as never)).resolves.toBeDefined();
  });

  it('has one operation per manifest route, with its id, access and path parameters', () => {
    for (const route of routes.filter((r) => !('dashboard' in r))) {
      const operation = doc.paths[`/v1${route.path}`]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toMatchObject({ operationId: route.id });
      const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
      const declared = ((operation?.parameters ?? []) as { name: string; in: string }[])
        .filter((p) => p.in === 'path')
        .map((p) => p.name);
      expect(declared).toEqual(pathParams);
      if (route.access === 'public') expect(operation?.security).toEqual([]);
      else expect(operation).not.toHaveProperty('security');
      expect(operation?.tags).toHaveLength(1);
    }
  });
});

describe('success responses', () => {
  it('every manifest route declares its success answer (a new route without one fails here)', () => {
    expect(undocumentedRoutes()).toEqual([]);
  });

  it.each(routes.filter((r) => !('dashboard' in r)).map((route) => [route.id, route] as const))(
    '%s: its status and a body schema',
    (id, route) => {
      const responses = responsesOf(route.method.toLowerCase(), `/v1${route.path}`);
      const status = String(STATUS[id] ?? 200);
      const success = Object.keys(responses).filter((code) => /^2/.test(code));
      expect(success).toEqual([status]);
      const content = responses[status]?.content as Record<string, { schema: Json }>;
      const [type] = Object.keys(content);
      if (type === 'application/json') {
        const schema = content[type]?.schema as Json;
        const ref = String(schema.$ref ?? '');
        expect(ref).toMatch(/^#\/components\/schemas\/\w+$/);
        expect(doc.components.schemas[ref.split('/').pop() ?? '']).toBeDefined();
      } else {
        expect(type).toBe('text/html');
        expect(route.access).toBe('public');
      }
    },
  );

  it('publishes the view shapes: a delivery with its attempt log, a recovery job, a webhook with events', () => {
    const { schemas } = doc.components;
    expect(schemas.Delivery?.required).toEqual(
      expect.arrayContaining(['object', 'id', 'webhook_id', 'status', 'attempt_log', 'created_at']),
    );
    expect(schemas.Delivery?.additionalProperties).toBe(false);
    const attempt = (((schemas.Delivery as Json).properties as Json).attempt_log as Json).items as Json;
    expect(JSON.stringify((attempt.properties as Json).error_class)).toContain(ERROR_CLASSES[0]);
    expect(jsonSchema(responsesOf('post', '/v1/webhooks/{id}/recoveries')['202'])).toEqual({
      $ref: '#/components/schemas/Recovery',
    });
    expect(((schemas.Recovery as Json).properties as Json).status).toEqual({
      type: 'string',
      enum: ['running', 'completed', 'canceled'],
      description: expect.any(String),
      example: 'running',
    });
    expect(jsonSchema(responsesOf('get', '/v1/webhooks')['200'])).toEqual({ $ref: '#/components/schemas/WebhookList' });
  });
});

describe('webhooks (the event catalog)', () => {
  const webhooks = (buildOpenApi() as { webhooks: Record<string, { post: Json }> }).webhooks;

  it('has one entry per event type, whose body schema is the catalog’s, as GET /v1/event-types serves it', () => {
    expect(Object.keys(webhooks)).toEqual(eventCatalog().map((entry) => entry.type));
    for (const { type, schema } of eventCatalog()) {
      const body = webhooks[type]?.post.requestBody as { content: Record<string, { schema: Json }> } | undefined;
      expect(body?.content['application/json']?.schema, type).toEqual(schema);
    }
  });

  it('states the signature headers of every delivery', () => {
    const parameters = webhooks['email.delivered']?.post.parameters as { name: string }[] | undefined;
    const names = (parameters ?? []).map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'X-Service-Signature']),
    );
  });

  it('lists the catalog at GET /v1/event-types for any valid key', () => {
    const list = op('get', '/v1/event-types');
    expect(list).toMatchObject({ operationId: 'listEventTypes', 'x-sendflow-access': 'key' });
    expect(jsonSchema(responsesOf('get', '/v1/event-types')['200'])).toEqual({
      $ref: '#/components/schemas/EventTypeList',
    });
  });
});

describe('headers and errors', () => {
  it('declares each rate-limit header, X-Request-Id and Retry-After as its own Header Object', () => {
    const { headers } = doc.components;
    for (const name of [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
      'Retry-After',
    ]) {
      expect(headers[name], name).toMatchObject({ schema: { type: expect.any(String) } });
    }
  });

  it('references them from every response, Retry-After on 429, and the one Error schema from every error', () => {
    for (const route of routes.filter((r) => !('dashboard' in r))) {
      const responses = responsesOf(route.method.toLowerCase(), `/v1${route.path}`);
      for (const [status, declared] of Object.entries(responses)) {
        const response = (
          declared.$ref ? doc.components.responses[String(declared.$ref).split('/').pop() ?? ''] : declared
        ) as Json;
        const headers = response.headers as Record<string, Json>;
        expect(headers['X-RateLimit-Limit'], `${route.id} ${status}`).toEqual({
          $ref: '#/components/headers/X-RateLimit-Limit',
        });
        expect(headers['X-Request-Id']).toEqual({ $ref: '#/components/headers/X-Request-Id' });
        if (status === '429') expect(headers['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
        const content = Object.keys(response.content as Json);
        // A public link's dead-link page (410) is HTML, for a person; every other error is the JSON shape.
        const page = route.access === 'public' && content.join() === 'text/html';
        if (!/^2/.test(status) && !page) expect(jsonSchema(response)).toEqual({ $ref: '#/components/schemas/Error' });
      }
      expect(responses).toHaveProperty('429');
      expect(responses).toHaveProperty('default');
    }
  });

  it('the Error schema is the shape of DESIGN §7, with the fields the Resend SDK reads', () => {
    expect(doc.components.schemas.Error).toMatchObject({
      required: ['error', 'status', 'code', 'name', 'message', 'statusCode'],
      properties: { retry_after: { type: 'integer' }, details: { type: 'array' } },
    });
  });
});

describe('requests', () => {
  const body = (method: string, path: string, type = 'application/json') =>
    (op(method, path).requestBody as { content: Record<string, { schema: Json }> } | undefined)?.content[type]?.schema;

  it('carries the request schemas the handlers validate with', () => {
    // `url` or Resend's `endpoint` (the handler requires one of them).
    expect(body('post', '/v1/webhooks')?.required).toEqual(['events']);
    expect(Object.keys((body('post', '/v1/webhooks')?.properties ?? {}) as Json)).toEqual(
      expect.arrayContaining(['url', 'endpoint', 'events']),
    );
    expect(Object.keys((body('patch', '/v1/webhooks/{id}')?.properties ?? {}) as Json)).toEqual(
      expect.arrayContaining(['url', 'endpoint', 'active', 'status']),
    );
    expect(Object.keys((body('post', '/v1/emails')?.properties ?? {}) as Json)).toEqual(
      expect.arrayContaining(['from', 'to', 'subject', 'html', 'scheduled_at']),
    );
    const send = op('post', '/v1/emails').parameters as { name: string }[];
    expect(send.map((p) => p.name)).toContain('Idempotency-Key');
  });

  it('states the event names as an enum in webhook bodies (legacy names too) and responses', () => {
    for (const [method, path] of [
      ['post', '/v1/webhooks'],
      ['put', '/v1/webhooks/{id}'],
    ] as const) {
      const items = (((body(method, path) as Json).properties as Json).events as Json).items as { enum: string[] };
      expect(items.enum).toEqual(expect.arrayContaining([...EVENT_TYPES, 'delivered', 'bounced']));
    }
    expect(doc.components.schemas.EventType).toEqual({
      type: 'string',
      enum: [...EVENT_TYPES],
      description: expect.any(String),
    });
    for (const name of ['Webhook', 'WebhookCreated', 'WebhookSummary', 'WebhookUpdated']) {
      expect(((doc.components.schemas[name] as Json).properties as Json).events, name).toEqual({
        type: 'array',
        items: { $ref: '#/components/schemas/EventType' },
        description: expect.any(String),
        example: expect.anything(),
      });
    }
  });

  it('states the form bodies of the public posts', () => {
    expect(body('post', '/v1/unsubscribe/{token}', 'application/x-www-form-urlencoded')).toMatchObject({
      properties: { 'List-Unsubscribe': { const: 'One-Click' } },
      required: ['List-Unsubscribe'],
    });
    expect((op('post', '/v1/unsubscribe/{token}').requestBody as Json).required).toBe(true);
    expect(body('post', '/v1/contacts/confirm/{token}', 'application/x-www-form-urlencoded')).toMatchObject({
      type: 'object',
    });
  });

  it('states the query parameters of list routes with their enums', () => {
    const params = op('get', '/v1/webhooks/{id}/deliveries').parameters as { name: string; in: string; schema: Json }[];
    const query = Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema]));
    expect(Object.keys(query).sort()).toEqual([
      'after',
      'error_class',
      'event_type',
      'limit',
      'since',
      'status',
      'until',
    ]);
    expect(query.since).toMatchObject({ type: 'string', format: 'date-time' });
    expect(query.until).toMatchObject({ type: 'string', format: 'date-time' });
    expect(query.status?.enum).toEqual(['pending', 'succeeded', 'failed']);
    expect(query.error_class?.enum).toEqual([...ERROR_CLASSES]);
    expect(query.limit).toMatchObject({ minimum: 1, maximum: 100, default: 20 });
  });
});

describe('the response checker (test/support/openapi-check)', () => {
  const checker = openApiChecker(buildOpenApi());
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    status,
    headers: new Headers({
      'Content-Type': 'application/json; charset=utf-8',
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '9',
      'X-RateLimit-Reset': '1',
      'X-Request-Id': 'r',
      ...headers,
    }),
    body: JSON.stringify(body),
  });
  const deleted = { object: 'webhook', id: 'wh_1', deleted: true };

  it('passes an answer of the declared shape, and finds an extra field, a wrong type, a missing header', () => {
    expect(checker.check('deleteWebhook', answer(200, deleted))).toEqual([]);
    expect(checker.check('deleteWebhook', answer(200, { ...deleted, extra: 1 })).join()).toMatch(/additional/);
    expect(checker.check('deleteWebhook', answer(200, { ...deleted, deleted: 'yes' }))).not.toEqual([]);
    const noId = answer(200, deleted);
    noId.headers.delete('X-Request-Id');
    expect(checker.check('deleteWebhook', noId).join()).toMatch(/X-Request-Id missing/);
  });

  it('checks errors against the Error schema and refuses an undeclared content type', () => {
    const notFound = { error: 'x', status: 404, code: 'not_found', name: 'not_found', message: 'x', statusCode: 404 };
    expect(checker.check('getWebhook', answer(404, notFound))).toEqual([]);
    expect(checker.check('getWebhook', answer(404, { error: 'x', status: 404, code: 'not_found' }))).not.toEqual([]);
    expect(checker.check('getWebhook', answer(404, { message: 'x' }))).not.toEqual([]);
    const html = answer(200, deleted, { 'Content-Type': 'text/html' });
    expect(checker.check('deleteWebhook', html).join()).toMatch(/content type text\/html is not declared/);
  });
});
