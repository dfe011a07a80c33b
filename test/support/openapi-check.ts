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
  /**
   * The fields the declared success schema names (`properties`, through `$ref`, `allOf`, objects and array items)
   * that a JSON answer lacks, as JSON pointers with `*` for any array index, sorted: what `required` would catch in
   * a document that marks nothing required.
   */
  absentFields(operationId: string, answer: Answer): string[];
}

// ajv-formats is CommonJS: its function is the default export's default under ESM interop.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as typeof addFormatsModule;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export interface CheckerOptions {
  /** Drops `additionalProperties: false` and `unevaluatedProperties: false`: fields the document does not name pass. */
  readonly allowExtraFields?: boolean;
  /** Replaces formats (ajv-formats' otherwise), e.g. what a `uuid` id may be. */
  readonly formats?: Readonly<Record<string, RegExp>>;
}

/** Removes every `additionalProperties: false` and `unevaluatedProperties: false` from a document, in place. */
function allowExtraFields(node: unknown): void {
  if (Array.isArray(node)) for (const item of node) allowExtraFields(item);
  else if (node && typeof node === 'object') {
    const object = node as Json;
    for (const keyword of ['additionalProperties', 'unevaluatedProperties']) {
      if (object[keyword] === false) delete object[keyword];
    }
    for (const value of Object.values(object)) allowExtraFields(value);
  }
}

export function openApiChecker(document: Json, options: CheckerOptions = {}): OpenApiChecker {
  // A copy: ajv keeps the document as the schema `openapi`, so `#/components/schemas/…` references resolve in it.
  const doc = structuredClone(document) as Json;
  if (options.allowExtraFields) allowExtraFields(doc);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const [name, pattern] of Object.entries(options.formats ?? {})) ajv.addFormat(name, pattern);
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

  const absent = (schema: Json, value: unknown, at: string, out: Set<string>): void => {
    const { value: resolved } = resolve(schema);
    for (const part of (resolved.allOf ?? []) as Json[]) absent(part, value, at, out);
    if (Array.isArray(value) && resolved.items) {
      for (const item of value) absent(resolved.items as Json, item, `${at}/*`, out);
    } else if (value && typeof value === 'object' && resolved.properties) {
      for (const [name, property] of Object.entries(resolved.properties as Record<string, Json>)) {
        if (!(name in value)) out.add(`${at}/${name}`);
        else absent(property, (value as Json)[name], `${at}/${name}`, out);
      }
    }
  };

  return {
    operationIds: [...operations.keys()],
    absentFields(operationId, answer) {
      const found = operations.get(operationId);
      const responses = (found?.op.responses ?? {}) as Record<string, Json>;
      const declared = responses[String(answer.status)];
      if (!declared) return [];
      const content = (resolve(declared).value.content ?? {}) as Record<string, Json>;
      const schema = content['application/json']?.schema as Json | undefined;
      if (!schema) return [];
      const out = new Set<string>();
      absent(schema, JSON.parse(answer.body), '', out);
      return [...out].sort();
    },
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
