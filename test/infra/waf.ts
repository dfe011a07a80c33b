// A WAF statement evaluator for template tests: decides whether a request (method, URI path, headers) matches a
// rule's statement as synthesized (CloudFormation casing), for the statements the firewall uses. Regexes run
// as JavaScript RegExp: the PCRE subset the firewall writes means the same in both (checked by the tests).
export interface WafRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
}

type Field = { UriPath?: object; Method?: object; SingleHeader?: { Name: string } };
export interface WafStatement {
  AndStatement?: { Statements: WafStatement[] };
  OrStatement?: { Statements: WafStatement[] };
  NotStatement?: { Statement: WafStatement };
  RegexMatchStatement?: { RegexString: string; FieldToMatch: Field; TextTransformations: { Type: string }[] };
  ByteMatchStatement?: {
    SearchString: string;
    FieldToMatch: Field;
    PositionalConstraint: string;
    TextTransformations: { Type: string }[];
  };
}

export function matches(statement: WafStatement, request: WafRequest): boolean {
  if (statement.AndStatement) return statement.AndStatement.Statements.every((s) => matches(s, request));
  if (statement.OrStatement) return statement.OrStatement.Statements.some((s) => matches(s, request));
  if (statement.NotStatement) return !matches(statement.NotStatement.Statement, request);
  const regex = statement.RegexMatchStatement;
  if (regex) {
    noTransformations(regex.TextTransformations);
    return new RegExp(regex.RegexString).test(field(regex.FieldToMatch, request));
  }
  const bytes = statement.ByteMatchStatement;
  if (bytes) {
    noTransformations(bytes.TextTransformations);
    if (bytes.PositionalConstraint !== 'EXACTLY') throw new Error(`unsupported ${bytes.PositionalConstraint}`);
    return field(bytes.FieldToMatch, request) === bytes.SearchString;
  }
  throw new Error(`unsupported statement ${JSON.stringify(statement)}`);
}

/** Every regex of a statement tree, to check what WAF accepts (length, no capturing group). */
export function regexesOf(statement: unknown): string[] {
  if (Array.isArray(statement)) return statement.flatMap(regexesOf);
  if (typeof statement !== 'object' || statement === null) return [];
  return Object.entries(statement).flatMap(([key, value]) =>
    key === 'RegexString' && typeof value === 'string' ? [value] : regexesOf(value),
  );
}

function field(spec: Field, request: WafRequest): string {
  if (spec.UriPath) return request.path;
  if (spec.Method) return request.method;
  if (spec.SingleHeader) {
    const name = spec.SingleHeader.Name.toLowerCase();
    return Object.entries(request.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1] ?? '';
  }
  throw new Error(`unsupported field ${JSON.stringify(spec)}`);
}

function noTransformations(transformations: { Type: string }[]): void {
  if (transformations.some((t) => t.Type !== 'NONE')) throw new Error('text transformations are not evaluated');
}
