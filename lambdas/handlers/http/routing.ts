// Route lookup over the manifest: by API Gateway resource (on AWS the gateway already matched the path)
// and by concrete path (the local gateway does the matching itself).
import { type HttpMethod, type RouteSpec, routes } from '../../manifest';

export type PathMatch =
  | { kind: 'route'; route: RouteSpec; params: Record<string, string> }
  | { kind: 'method_not_allowed'; resource: string; allow: HttpMethod[] }
  | { kind: 'not_found' };

interface CompiledResource {
  readonly resource: string;
  readonly pattern: RegExp;
  readonly params: readonly string[];
  readonly methods: ReadonlyMap<string, RouteSpec>;
}

function compile(resource: string): { pattern: RegExp; params: string[] } {
  const params: string[] = [];
  const source = resource
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)(\+?)\}$/.exec(segment);
      if (!param?.[1]) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      params.push(param[1]);
      // `{name+}` is API Gateway's greedy parameter: the rest of the path, slashes included.
      return param[2] ? '(.+?)' : '([^/]+)';
    })
    .join('/');
  return { pattern: new RegExp(`^${source}/?$`), params };
}

const greedy = (resource: string) => (resource.includes('+}') ? 1 : 0);
/** Where the first parameter segment is: between resources with as many parameters, a later one is more literal. */
const firstParam = (resource: string) => {
  const index = resource.split('/').findIndex((segment) => segment.startsWith('{'));
  return index < 0 ? Number.MAX_SAFE_INTEGER : index;
};

const resources: readonly CompiledResource[] = [...new Set(routes.map((route) => route.path))]
  // Literal segments win over parameters, as in API Gateway: sort resources with fewer params first (of as many,
  // the one whose first parameter comes later: /emails/receiving/{id} before /emails/{id}/cancel), and a greedy
  // parameter last of all.
  .map((resource) => ({ resource, ...compile(resource) }))
  .sort(
    (a, b) =>
      greedy(a.resource) - greedy(b.resource) ||
      a.params.length - b.params.length ||
      firstParam(b.resource) - firstParam(a.resource),
  )
  .map(({ resource, pattern, params }) => ({
    resource,
    pattern,
    params,
    methods: new Map(routes.filter((r) => r.path === resource).map((r) => [r.method, r])),
  }));

export function matchPath(method: string, path: string): PathMatch {
  for (const entry of resources) {
    const found = entry.pattern.exec(path);
    if (!found) continue;
    const route = entry.methods.get(method.toUpperCase());
    if (!route)
      return { kind: 'method_not_allowed', resource: entry.resource, allow: [...entry.methods.keys()] as HttpMethod[] };
    const params: Record<string, string> = {};
    for (const [i, name] of entry.params.entries()) {
      const value = safeDecode(found[i + 1] ?? '');
      if (value === null) return { kind: 'not_found' };
      params[name] = value;
    }
    return { kind: 'route', route, params };
  }
  return { kind: 'not_found' };
}

/** The route API Gateway matched, from the event's resource template and method. */
export function routeFor(method: string, resource: string): RouteSpec | undefined {
  return resources.find((entry) => entry.resource === resource)?.methods.get(method.toUpperCase());
}

/** Methods declared on a resource template (for 405 answers to the gateway's ANY fallback). */
export function methodsOn(resource: string): HttpMethod[] {
  return [...(resources.find((entry) => entry.resource === resource)?.methods.keys() ?? [])] as HttpMethod[];
}

function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
