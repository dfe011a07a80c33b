// Checks real answers against the OpenAPI document, independently of the zod schemas it was made from: the body
// against the JSON Schema the document declares for that operation, status and content type (ajv, draft 2020-12,
// formats checked), and the presence of every header the response marks required.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;

/** What a check needs of an answer (a fetch Response, read once). */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export interface OpenApiChecker {
  /** Every operationId of the document. */
  readonly operationIds: readonly string[];
  /** The problems of one answer of `operationId`; [] when it conforms. */
  check(operationId: string, answer: Answer): string[];
}

// ajv-formats is CommonJS: its function is the default export's default under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function openApiChecker(document: Json): OpenApiChecker {
  // A copy: ajv keeps the document as the schema `openapi`, so `#/components/schemas/…` references resolve in it.
  const doc = structuredClone(document) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  const operations = new Map<string, { path: string; method: string; op: Json }>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      const id = (op as Json).operationId;
      if (typeof id === 'string') operations.set(id, { path, method, op: op as Json });
    }
  }
  const resolve = (value: Json): { location: string[]; value: Json } => {
    if (typeof value.$ref !== 'string') return { location: [], value };
    const parts = value.$ref.replace(/^#\//, '').split('/');
    let target: unknown = doc;
    for (const part of parts) target = (target as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    return { location: parts, value: target as Json };
  };

  return {
    operationIds: [...operations.keys()],
    check(operationId, answer) {
      const found = operations.get(operationId);
      if (!found) return [`no operation ${operationId} in the document`];
      const responses = found.op.responses as Record<string, Json>;
      const key = [String(answer.status), `${String(answer.status)[0]}XX`, 'default'].find((k) => responses[k]);
      if (!key) return [`${operationId}: status ${answer.status} is not declared`];
      const declared = responses[key] as Json;
      const { location, value: response } = resolve(declared);
      const base = location.length ? location : ['paths', found.path, found.method, 'responses', key];
      const problems: string[] = [];
      for (const [name, headerRef] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
        const header = resolve(headerRef).value;
        if (header.required && !answer.headers.has(name)) problems.push(`${operationId}: header ${name} missing`);
      }
      const type = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
      const content = (response.content ?? {}) as Record<string, Json>;
      if (!content[type]) {
        problems.push(`${operationId} ${answer.status}: content type ${type || '(none)'} is not declared`);
        return problems;
      }
      if (type !== 'application/json') return problems;
      const ref = `openapi#/${pointer(...base, 'content', type, 'schema')}`;
      const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      let body: unknown;
      try {
        body = JSON.parse(answer.body);
      } catch {
        return [...problems, `${operationId} ${answer.status}: the body is not JSON`];
      }
      if (!validate(body)) {
        for (const error of validate.errors ?? []) {
          problems.push(
            `${operationId} ${answer.status}: ${error.instancePath || '(body)'} ${error.message} ${JSON.stringify(error.params)}`,
          );
        }
      }
      return problems;
    },
  };
}

/** Reads a fetch Response once into what a check needs. */
export async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, headers: res.headers, body: await res.text() };
}
