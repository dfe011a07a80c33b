// Which requests reach a method behind the authorizer, as WAF regexes: per HTTP method, the URI paths that API
// Gateway resolves to a resource declaring that method for keyed callers. Everything else (public routes, the
// 404/405 fallbacks, any path or method no keyed route declares) reaches a method without the authorizer, so
// the firewall counts it against the anonymous per-IP limit whatever Authorization it carries.
import { type RouteSpec, routes } from '../../lambdas/manifest';

/** WAF's ceiling on one RegexMatchStatement's pattern. */
export const WAF_REGEX_MAX_LENGTH = 512;
/**
 * One path segment as a path parameter matches it. `%` is left out: a percent-encoded segment might be decoded
 * before routing and land elsewhere, so it never counts as keyed (such traffic is only ever limited more).
 */
const SEGMENT_CHAR = '[^/%]';

interface Node {
  readonly children: Map<string, Node>;
  /** HTTP methods declared on this resource behind the authorizer. */
  readonly keyed: Set<string>;
}

/** The API Gateway resource tree of the manifest's routes, with each resource's keyed methods. */
function routeTree(specs: readonly RouteSpec[]): Node {
  const root: Node = { children: new Map(), keyed: new Set() };
  for (const route of specs) {
    let node = root;
    for (const segment of route.path.split('/').filter(Boolean)) {
      const next = node.children.get(segment) ?? { children: new Map(), keyed: new Set() };
      node.children.set(segment, next);
      node = next;
    }
    if (route.access === 'public') continue;
    if (route.path.includes('+}')) throw new Error(`Keyed route ${route.path}: a greedy path is not supported`);
    node.keyed.add(route.method);
  }
  return root;
}

/**
 * Keyed paths per HTTP method, each a list of WAF regexes (an OR) of at most WAF_REGEX_MAX_LENGTH characters,
 * anchored, with the stage segment optional (as in linkPathPattern). No capturing groups: WAF refuses them.
 */
export function keyedPathPatterns(stageName: string, specs: readonly RouteSpec[] = routes): Map<string, string[]> {
  const root = routeTree(specs);
  const methods = new Set(specs.filter((route) => route.access !== 'public').map((route) => route.method));
  const patterns = new Map<string, string[]>();
  const prefix = `^(?:/${literal(stageName)})?`;
  for (const method of [...methods].sort()) {
    const branches = fittedBranches(root, method, prefix);
    // Pack the top-level branches into as few patterns as fit.
    const packed: string[][] = [];
    for (const branch of branches) {
      const last = packed.at(-1);
      if (last && wrap(prefix, [...last, branch]).length <= WAF_REGEX_MAX_LENGTH) last.push(branch);
      else packed.push([branch]);
    }
    const regexes = packed.map((group) => wrap(prefix, group));
    const tooLong = regexes.find((regex) => regex.length > WAF_REGEX_MAX_LENGTH);
    if (tooLong) throw new Error(`Keyed ${method} paths need a WAF regex over ${WAF_REGEX_MAX_LENGTH} characters`);
    patterns.set(method, regexes);
  }
  return patterns;
}

/**
 * The root's branches for `method`, each short enough for one pattern: a branch too long alone (a resource with
 * many static siblings of a parameter, e.g. /emails with batch, metrics and receiving beside {id}) is split into
 * its own resource and one branch per child, recursively; the alternatives together match the same paths.
 */
function fittedBranches(node: Node, method: string, prefix: string, path = ''): string[] {
  const statics = [...node.children.keys()].filter((segment) => !segment.startsWith('{'));
  const branches: string[] = [];
  for (const [segment, child] of node.children) {
    const rest = below(child, method);
    if (rest === null) continue;
    const here = `${path}/${segment.startsWith('{') ? segmentExcept(statics) : literal(segment)}`;
    if (wrap(prefix, [`${here}${rest}`]).length <= WAF_REGEX_MAX_LENGTH || child.children.size === 0) {
      branches.push(`${here}${rest}`);
      continue;
    }
    if (child.keyed.has(method)) branches.push(here);
    branches.push(...fittedBranches(child, method, prefix, here));
  }
  return branches;
}

function wrap(prefix: string, branches: readonly string[]): string {
  return `${prefix}${branches.length === 1 ? branches[0] : `(?:${branches.join('|')})`}$`;
}

/** Regex of the path below `node` (empty, or `/…`) resolving to a resource with `method` keyed; null if none. */
function below(node: Node, method: string): string | null {
  const branches = childBranches(node, method);
  const here = node.keyed.has(method);
  if (!branches.length) return here ? '' : null;
  const group = branches.length === 1 ? (branches[0] as string) : `(?:${branches.join('|')})`;
  if (!here) return group;
  return branches.length === 1 ? `(?:${group})?` : `${group}?`;
}

/**
 * One alternative per child with keyed paths below it. API Gateway prefers a static segment over a parameter,
 * so a parameter's alternative excludes its static siblings (GET /emails/batch is the fallback of the batch
 * resource, not GET /emails/{id}).
 */
function childBranches(node: Node, method: string): string[] {
  const statics = [...node.children.keys()].filter((segment) => !segment.startsWith('{'));
  const branches: string[] = [];
  for (const [segment, child] of node.children) {
    const rest = below(child, method);
    if (rest === null) continue;
    branches.push(`/${segment.startsWith('{') ? segmentExcept(statics) : literal(segment)}${rest}`);
  }
  return branches;
}

/**
 * A non-empty segment equal to none of `words`, without lookahead (WAF supports only some zero-width
 * assertions): built from the words' trie, e.g. for `batch`: any segment not starting with b, or b then
 * anything not continuing "atch", …, or "batch" followed by more.
 */
export function segmentExcept(words: readonly string[]): string {
  if (!words.length) return `${SEGMENT_CHAR}+`;
  return group(notAmong(['', ...words]));
}

/** Alternatives matching any string of segment characters that is not in `words`. */
function notAmong(words: readonly string[]): string[] {
  const alternatives: string[] = [];
  if (!words.includes('')) alternatives.push('');
  const firsts = [...new Set(words.filter(Boolean).map((word) => word.charAt(0)))].sort();
  alternatives.push(`[^/%${firsts.map(classLiteral).join('')}]${SEGMENT_CHAR}*`);
  for (const first of firsts) {
    const rest = notAmong(words.filter((word) => word.charAt(0) === first).map((word) => word.slice(1)));
    alternatives.push(`${literal(first)}${group(rest)}`);
  }
  return alternatives;
}

/** A group of alternatives, `''` among them made optional. */
function group(alternatives: readonly string[]): string {
  const nonEmpty = alternatives.filter(Boolean);
  const optional = nonEmpty.length < alternatives.length;
  if (nonEmpty.length === 1 && !optional) return nonEmpty[0] as string;
  return `(?:${nonEmpty.join('|')})${optional ? '?' : ''}`;
}

/** A path segment as a regex literal (segments hold no `/`). */
function literal(text: string): string {
  return text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
}

function classLiteral(char: string): string {
  return /[\]\\^-]/.test(char) ? `\\${char}` : char;
}
