// The published OpenAPI document is the generated one (no drift), and it describes every manifest route.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../lambdas/handlers/http/openapi';
import { routes } from '../../lambdas/manifest';

const doc = buildOpenApi() as { paths: Record<string, Record<string, Record<string, unknown>>> };

describe('docs/openapi.json', () => {
  it('is exactly what `npm run openapi` generates from the code', () => {
    const committed = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(buildOpenApi())));
  });

  it('leaves the dashboard pages out: they are HTML for people, not API operations', () => {
    expect(Object.keys(doc.paths).filter((path) => path.includes('/dashboard'))).toEqual([]);
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
    }
  });

  it('carries the request schemas the handlers validate with', () => {
    type RequestBody = { content: Record<string, { schema: { required?: string[]; properties: object } }> };
    const body = (method: string, path: string) =>
      (doc.paths[path]?.[method]?.requestBody as RequestBody | undefined)?.content['application/json']?.schema;
    expect(body('post', '/v1/webhooks')?.required).toEqual(['url', 'events']);
    expect(Object.keys(body('post', '/v1/emails')?.properties ?? {})).toEqual(
      expect.arrayContaining(['from', 'to', 'subject', 'html', 'scheduled_at']),
    );
    const list = doc.paths['/v1/webhooks/{id}/deliveries']?.get?.parameters as { name: string; in: string }[];
    expect(
      list
        .filter((p) => p.in === 'query')
        .map((p) => p.name)
        .sort(),
    ).toEqual(['after', 'error_class', 'limit', 'status']);
    const send = doc.paths['/v1/emails']?.post?.parameters as { name: string }[];
    expect(send.map((p) => p.name)).toContain('Idempotency-Key');
  });
});
