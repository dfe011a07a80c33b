// The API reference as one static HTML page rendered from the OpenAPI document: operations grouped by tag, an
// anchor per operation (#op-<operationId>) and per schema (#schema-<name>), parameters and schemas as tables with
// the JSON Schema alongside. No script and nothing remote: it works offline under a CSP that allows one style.
import { createHash } from 'node:crypto';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { escapeHtml as esc } from './pages';

type Json = Record<string, unknown>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const SCHEMA_REF = '#/components/schemas/';

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d1d1f}
header,main{max-width:70rem;margin:0 auto;padding:0 1rem}
nav{max-width:70rem;margin:0 auto;padding:0 1rem;columns:2 22rem}
nav section{break-inside:avoid}nav ul{list-style:none;padding:0;margin:0 0 1rem}
h2{border-bottom:2px solid #ddd;padding-top:1rem}article{border-top:1px solid #eee;padding:.5rem 0 1rem}
table{border-collapse:collapse;margin:.5rem 0;width:100%}th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f5f7}code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f7;padding:.5rem;overflow:auto}
.method{display:inline-block;min-width:4.5em;font-weight:700;text-transform:uppercase}
.get{color:#0a6b2e}.post{color:#0b55a8}.put,.patch{color:#8a5a00}.delete{color:#b3261e}`;

/** The page, with its headers: the CSP allows exactly the page's own style (by hash), nothing else. */
export function referencePage(document: Json): APIGatewayProxyResult {
  const styleHash = createHash('sha256').update(STYLE).digest('base64');
  return {
    statusCode: 200,
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${styleHash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    },
    body: renderReference(document),
  };
}

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly op: Json;
}

export function renderReference(document: Json): string {
  const info = (document.info ?? {}) as Json;
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const operations: Operation[] = Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method, path, op: item[method] as Json })),
  );
  const tags = [...new Set(operations.map(tagOf))];
  const schemas = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const byTag = (tag: string) => operations.filter((o) => tagOf(o) === tag);
  const title = `${String(info.title ?? 'API')} reference`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${esc(title)}</title><style>${STYLE}</style></head><body>
<header><h1>${esc(title)}</h1><p>${esc(String(info.description ?? ''))}</p>
<p>Version <code>${esc(String(info.version ?? ''))}</code>. The OpenAPI document: <a href="openapi.json">openapi.json</a>.
Authenticate with <code>Authorization: Bearer sf_test_…</code> unless an operation says no API key.</p></header>
<nav aria-label="Operations">${tags
    .map(
      (tag) =>
        `<section><h2>${esc(tag)}</h2><ul>${byTag(tag)
          .map(
            (o) =>
              `<li><a href="#op-${esc(String(o.op.operationId))}"><span class="method ${o.method}">${o.method}</span> <code>${esc(o.path)}</code></a> ${esc(String(o.op.summary ?? ''))}</li>`,
          )
          .join('')}</ul></section>`,
    )
    .join('')}<section><h2>Schemas</h2><ul>${Object.keys(schemas)
    .map((name) => `<li>${schemaLink(name)}</li>`)
    .join('')}</ul></section></nav>
<main>${tags
    .map(
      (tag) =>
        `<section aria-labelledby="${anchor('tag', tag)}"><h2 id="${anchor('tag', tag)}">${esc(tag)}</h2>${byTag(tag)
          .map(renderOperation)
          .join('\n')}</section>`,
    )
    .join('\n')}
<section aria-labelledby="schemas"><h2 id="schemas">Schemas</h2>${Object.entries(schemas)
    .map(
      ([name, schema]) =>
        `<article id="schema-${esc(name)}"><h3>${esc(name)}</h3>${schema.description ? `<p>${esc(String(schema.description))}</p>` : ''}${schemaBlock(schema)}</article>`,
    )
    .join('\n')}</section></main></body></html>
`;
}

const tagOf = (o: Operation) => String((o.op.tags as string[] | undefined)?.[0] ?? 'Other');
const anchor = (kind: string, name: string) => `${kind}-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
const schemaLink = (name: string) => `<a href="#schema-${esc(name)}">${esc(name)}</a>`;

function renderOperation({ method, path, op }: Operation): string {
  const id = String(op.operationId);
  const params = (op.parameters ?? []) as Json[];
  const body = op.requestBody as Json | undefined;
  const responses = (op.responses ?? {}) as Record<string, Json>;
  return `<article id="op-${esc(id)}"><h3><span class="method ${method}">${method}</span> <code>${esc(path)}</code></h3>
<p>${esc(String(op.summary ?? ''))}. ${esc(String(op.description ?? ''))} <small>operationId <code>${esc(id)}</code>${
    op['x-sendflow-idempotent'] ? '; honours <code>Idempotency-Key</code>' : ''
  }</small></p>${
    params.length
      ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Required</th><th>Type</th><th>Description</th><th>Example</th></tr></thead><tbody>${params
          .map(
            (p) =>
              `<tr><td><code>${esc(String(p.name))}</code></td><td>${esc(String(p.in))}</td><td>${p.required ? 'yes' : 'no'}</td><td>${typeOf(p.schema as Json)}</td><td>${esc(String(p.description ?? (p.schema as Json)?.description ?? ''))}</td><td>${exampleCell(p.example ?? (p.schema as Json)?.example)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : ''
  }${
    body
      ? `<h4>Request body${body.required ? '' : ' (optional)'}</h4>${Object.entries(
          body.content as Record<string, Json>,
        )
          .map(([type, media]) => `<p><code>${esc(type)}</code></p>${schemaBlock(media.schema as Json)}`)
          .join('')}`
      : ''
  }<h4>Responses</h4><table><thead><tr><th>Status</th><th>Description</th><th>Body</th></tr></thead><tbody>${Object.entries(
    responses,
  )
    .map(([status, response]) => {
      const ref = typeof response.$ref === 'string' ? response.$ref.split('/').pop() : undefined;
      const content = Object.entries((response.content ?? {}) as Record<string, Json>);
      const bodyCell = ref
        ? `<a href="#schema-Error">Error</a> (<code>${esc(ref)}</code>)`
        : content.map(([type, media]) => `<code>${esc(type)}</code> ${typeOf(media.schema as Json)}`).join('<br>');
      return `<tr><td><code>${esc(status)}</code></td><td>${esc(String(response.description ?? ''))}</td><td>${bodyCell}</td></tr>`;
    })
    .join('')}</tbody></table></article>`;
}

/** A field's example, as JSON in code (empty when it has none). */
function exampleCell(example: unknown): string {
  return example === undefined ? '' : `<code>${esc(JSON.stringify(example))}</code>`;
}

/** A schema as a table of its properties (for an object), then its JSON Schema, folded. */
function schemaBlock(schema: Json | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') return `<p>${typeOf(schema)}</p>`;
  const properties = (schema.properties ?? undefined) as Record<string, Json> | undefined;
  const required = new Set((schema.required ?? []) as string[]);
  const table = properties
    ? `<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th><th>Example</th></tr></thead><tbody>${Object.entries(
        properties,
      )
        .map(
          ([name, property]) =>
            `<tr><td><code>${esc(name)}</code></td><td>${typeOf(property)}</td><td>${required.has(name) ? 'yes' : 'no'}</td><td>${esc(String(property.description ?? ''))}</td><td>${exampleCell(property.example)}</td></tr>`,
        )
        .join('')}</tbody></table>`
    : `<p>${typeOf(schema)}</p>`;
  return `${table}<details><summary>JSON Schema</summary><pre>${esc(JSON.stringify(schema, null, 2))}</pre></details>`;
}

/** A short, readable type: `string`, `integer | null`, `array of Delivery`, `one of "a", "b"`. */
function typeOf(schema: Json | undefined): string {
  if (!schema) return 'any';
  if (typeof schema.$ref === 'string') {
    return schema.$ref.startsWith(SCHEMA_REF) ? schemaLink(schema.$ref.slice(SCHEMA_REF.length)) : esc(schema.$ref);
  }
  if (schema.const !== undefined) return `<code>${esc(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum)) {
    return `one of ${schema.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(', ')}`;
  }
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (union) return union.map(typeOf).join(' | ');
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : schema.type ? [String(schema.type)] : [];
  return (
    types
      .map((type) => {
        if (type === 'array') return `array of ${typeOf(schema.items as Json | undefined)}`;
        if (type === 'string' && schema.format) return `string (${esc(String(schema.format))})`;
        return esc(type);
      })
      .join(' | ') || 'any'
  );
}
