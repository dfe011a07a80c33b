// The API reference page (lambdas/handlers/http/reference-page.ts): grouped by tag, an anchor per operation and
// schema, parameters and schemas as tables, every text escaped, and a CSP that allows only the page's own style.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../lambdas/handlers/http/openapi';
import { referencePage, renderReference } from '../../lambdas/handlers/http/reference-page';

const doc = {
  openapi: '3.1.0',
  info: { title: 'T <&>', version: 'v1', description: 'd' },
  paths: {
    '/v1/things/{id}': {
      get: {
        operationId: 'getThing',
        summary: 'Get a <thing>',
        tags: ['Things'],
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: ['a', 'b'] } },
        ],
        responses: {
          '200': {
            description: 'The thing',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
          },
          default: { $ref: '#/components/responses/Error' },
        },
      },
    },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        properties: { id: { type: 'string' }, at: { type: ['string', 'null'], format: 'date-time' } },
        required: ['id'],
      },
    },
  },
};

describe('the API reference page', () => {
  it('groups operations by tag with an anchor each, and renders parameters and schemas as tables', () => {
    const html = renderReference(doc);
    expect(html).toContain('<h2 id="tag-things">Things</h2>');
    expect(html).toContain('<article id="op-getThing">');
    expect(html).toContain('<a href="#op-getThing">');
    expect(html).toContain(
      '<td><code>status</code></td><td>query</td><td>no</td><td>one of <code>&quot;a&quot;</code>',
    );
    expect(html).toContain('<a href="#schema-Thing">Thing</a>');
    expect(html).toContain('<article id="schema-Thing">');
    expect(html).toContain('<td><code>at</code></td><td>string (date-time) | null</td><td>no</td>');
  });

  it('escapes every text of the document', () => {
    const html = renderReference(doc);
    expect(html).toContain('Get a &lt;thing&gt;');
    expect(html).toContain('<title>T &lt;&amp;&gt; reference</title>');
    expect(html).not.toContain('<thing>');
  });

  it('answers with a CSP that allows exactly its own style, by hash, and nothing else', () => {
    const page = referencePage(buildOpenApi());
    const csp = String(page.headers?.['Content-Security-Policy']);
    const style = /<style>([\s\S]*?)<\/style>/.exec(page.body)?.[1] ?? '';
    const hash = createHash('sha256').update(style).digest('base64');
    expect(csp).toBe(
      `default-src 'none'; style-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    // Nothing remote is loaded (a URL may be named in text: an example such as https://example.com/hooks).
    expect(page.body).not.toMatch(/<script|<link|<img|(?:src|href|action)="https?:|url\(\s*['"]?https?:/);
  });
});
