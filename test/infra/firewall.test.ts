// The WAF's public-link rule: one-click unsubscribe and confirmation links have their own per-IP limit, the
// anonymous limit does not count them, and the URI pattern matches exactly the links the app signs.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_SEND_BODY_BYTES } from '../../lambdas/domain/body-ceiling';
import { signToken } from '../../lambdas/domain/tokens';
import { PUBLIC_ROUTE_IP_FACTOR } from '../../lambdas/handlers/middleware/rate-limit';
import { routes, STAGE } from '../../lambdas/manifest';
import { integerAbovePattern } from '../../lib/constructs/content-length';
import { linkPathPattern } from '../../lib/constructs/firewall';
import { keyedPathPatterns, segmentExcept, WAF_REGEX_MAX_LENGTH } from '../../lib/constructs/keyed-routes';
import { methods, only, synthSendflow } from './synth';
import { matches, regexesOf, type WafRequest, type WafStatement } from './waf';

interface Rule {
  Name: string;
  Priority: number;
  Action?: unknown;
  OverrideAction?: unknown;
  Statement: { RateBasedStatement?: { Limit: number; ScopeDownStatement?: unknown } };
}

let api: Template;
let rules: Rule[];
const rule = (name: string): Rule => {
  const found = rules.find((r) => r.Name === name);
  if (!found) throw new Error(`no WAF rule ${name}`);
  return found;
};
const linkStatement = {
  RegexMatchStatement: {
    RegexString: linkPathPattern(STAGE),
    FieldToMatch: { UriPath: {} },
    TextTransformations: [{ Priority: 0, Type: 'NONE' }],
  },
};

beforeAll(() => {
  ({ api } = synthSendflow());
  rules = (only(api, 'AWS::WAFv2::WebACL').properties as { Rules: Rule[] }).Rules;
});

describe('WAF rules', () => {
  it('have unique priorities and names', () => {
    expect(new Set(rules.map((r) => r.Priority)).size).toBe(rules.length);
    expect(new Set(rules.map((r) => r.Name)).size).toBe(rules.length);
  });

  it('limit the public link routes per IP, at the app public-route window, answering 429', () => {
    const link = rule('LinkPerIp');
    expect(link.Statement.RateBasedStatement).toEqual({
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 60,
      Limit: 20 * PUBLIC_ROUTE_IP_FACTOR * 60,
      ScopeDownStatement: linkStatement,
    });
    expect(link.Action).toEqual(rule('AnonymousPerIp').Action);
    expect(JSON.stringify(link.Action)).toContain('429');
  });

  it("answer their 429 in the API's error shape, with Resend's name, message and statusCode", () => {
    const bodies = (
      only(api, 'AWS::WAFv2::WebACL').properties as {
        CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
      }
    ).CustomResponseBodies;
    const body = bodies.rate_limited;
    expect(JSON.stringify(rule('AnonymousPerIp').Action)).toContain('rate_limited');
    expect(body?.ContentType).toBe('APPLICATION_JSON');
    const parsed = JSON.parse(body?.Content ?? '{}');
    expect(parsed).toMatchObject({ status: 429, statusCode: 429, code: 'rate_limited', name: 'rate_limit_exceeded' });
    expect(parsed.message).toBe(parsed.error);
  });

  it('leave the link routes out of the anonymous per-IP rule', () => {
    const scopeDown = rule('AnonymousPerIp').Statement.RateBasedStatement?.ScopeDownStatement as {
      AndStatement: { Statements: unknown[] };
    };
    expect(scopeDown.AndStatement.Statements).toContainEqual({ NotStatement: { Statement: linkStatement } });
    expect(scopeDown.AndStatement.Statements).toHaveLength(2);
  });

  it('write only regexes WAF accepts: at most 512 characters, no capturing group', () => {
    const regexes = regexesOf(rules);
    expect(regexes.length).toBeGreaterThan(3);
    for (const regex of regexes) {
      expect(regex.length, regex).toBeLessThanOrEqual(512);
      // A "(" not escaped, not inside a character class, and not followed by "?" opens a capturing group.
      const outsideClasses = regex.replace(/\\./g, '').replace(/\[[^\]]*\]/g, '');
      expect(outsideClasses, regex).not.toMatch(/\((?!\?)/);
    }
  });
});

describe('every method of the API', () => {
  const FAKE_KEY = `Bearer sf_live_${'a'.repeat(32)}`;
  const VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
  const perIp = (request: WafRequest) =>
    ['AnonymousPerIp', 'LinkPerIp'].some((name) =>
      matches(rule(name).Statement.RateBasedStatement?.ScopeDownStatement as WafStatement, request),
    );
  const anonymous = (request: WafRequest) =>
    matches(rule('AnonymousPerIp').Statement.RateBasedStatement?.ScopeDownStatement as WafStatement, request);
  /** A concrete URI path for a resource path, on the stage and with the base path stripped. */
  const concrete = (path: string) => {
    const filled = path.replace(/\{[^}]+\+\}/g, 'a/b').replace(/\{[^}]+\}/g, 'id_1');
    return [`/${STAGE}${filled === '/' ? '' : filled}`, filled];
  };
  let all: ReturnType<typeof methods>;
  beforeAll(() => {
    all = methods(api);
  });

  it('either passes the authorizer or sits under a per-IP rule, whatever Authorization it carries', () => {
    let checked = 0;
    for (const method of all) {
      if (method.properties.AuthorizationType === 'CUSTOM') continue;
      const declared = all.filter((m) => m.path === method.path).map((m) => m.httpMethod);
      const verbs =
        method.httpMethod === 'ANY' ? VERBS.filter((verb) => !declared.includes(verb)) : [method.httpMethod];
      for (const verb of verbs) {
        for (const path of concrete(method.path)) {
          for (const authorization of [FAKE_KEY, `bearer sf_test_${'b'.repeat(64)}`, undefined]) {
            const headers: Record<string, string> = authorization ? { Authorization: authorization } : {};
            const request = { method: verb, path, headers };
            expect(perIp(request), `${verb} ${path} ${authorization ?? '(no key)'}`).toBe(true);
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('counts a keyed method reached through a shadowing static segment, a deeper path or an encoded one', () => {
    for (const [verb, path] of [
      ['GET', '/v1/emails/batch'],
      ['POST', '/v1/emails/batch/cancel'],
      ['GET', '/v1/contacts/confirm'],
      ['DELETE', '/v1/contacts/confirm'],
      ['GET', '/v1/emails/em%2F1'],
      ['GET', '/v1/emails/'],
      ['GET', '/v1/EMAILS'],
      ['GET', '/v1/dashboard'],
      ['POST', '/v1/dashboard/sign-out'],
    ] as const) {
      expect(anonymous({ method: verb, path, headers: { Authorization: FAKE_KEY } }), `${verb} ${path}`).toBe(true);
    }
    // The API reference is a public page without a token: the link rule's wider per-IP limit holds it.
    for (const path of ['/v1/reference', '/v1/openapi.json']) {
      expect(perIp({ method: 'GET', path, headers: { Authorization: FAKE_KEY } }), path).toBe(true);
    }
  });

  it('leaves keyed routes with a well-formed key to the authorizer and the usage plans, not the anonymous limit', () => {
    const keyed = all.filter((method) => method.properties.AuthorizationType === 'CUSTOM');
    expect(keyed.length).toBe(routes.filter((route) => route.access !== 'public').length);
    for (const method of keyed) {
      for (const path of concrete(method.path)) {
        const request = { method: method.httpMethod, path, headers: { Authorization: FAKE_KEY } };
        expect(anonymous(request), `${method.httpMethod} ${path}`).toBe(false);
        expect(anonymous({ ...request, headers: {} }), `${method.httpMethod} ${path} without a key`).toBe(true);
      }
    }
    expect(anonymous({ method: 'POST', path: '/v1/emails/batch', headers: { Authorization: FAKE_KEY } })).toBe(false);
  });
});

describe('body ceiling rule', () => {
  type Block = { Block: { CustomResponse: { ResponseCode: number; CustomResponseBodyKey: string } } };
  const bodies = () =>
    (
      only(api, 'AWS::WAFv2::WebACL').properties as {
        CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
      }
    ).CustomResponseBodies;
  const tooLarge = (contentLength: string | undefined, method = 'POST', path = '/v1/emails') =>
    matches(rule('BodyTooLarge').Statement as WafStatement, {
      method,
      path,
      headers: contentLength === undefined ? {} : { 'Content-Length': contentLength },
    });

  it('blocks a Content-Length above the AWS send ceiling with 413 in the error shape', () => {
    const action = rule('BodyTooLarge').Action as Block;
    expect(action.Block.CustomResponse.ResponseCode).toBe(413);
    const body = bodies()[action.Block.CustomResponse.CustomResponseBodyKey];
    expect(body?.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body?.Content ?? '{}')).toEqual({
      error: expect.stringContaining('3000000'),
      status: 413,
      code: 'payload_too_large',
      name: 'payload_too_large',
      message: expect.stringContaining('3000000'),
      statusCode: 413,
    });
  });

  it('inspects the single content-length header against the ceiling, on every route', () => {
    expect(rule('BodyTooLarge').Statement).toEqual({
      RegexMatchStatement: {
        RegexString: integerAbovePattern(MAX_SEND_BODY_BYTES),
        FieldToMatch: { SingleHeader: { Name: 'content-length' } },
        TextTransformations: [{ Priority: 0, Type: 'NONE' }],
      },
    });
    for (const [value, blocked] of [
      [String(MAX_SEND_BODY_BYTES), false],
      [String(MAX_SEND_BODY_BYTES + 1), true],
      ['6291456', true],
      ['10485760', true],
      ['1024', false],
      [undefined, false],
    ] as const) {
      expect(tooLarge(value), String(value)).toBe(blocked);
      expect(tooLarge(value, 'PUT', '/v1/webhooks/wh_1'), String(value)).toBe(blocked);
    }
  });

  it('refuses a body of unknown length (Transfer-Encoding, chunked) with 411 in the error shape', () => {
    const action = rule('BodyLengthUnknown').Action as Block;
    expect(action.Block.CustomResponse.ResponseCode).toBe(411);
    const body = bodies()[action.Block.CustomResponse.CustomResponseBodyKey];
    expect(body?.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body?.Content ?? '{}')).toMatchObject({
      status: 411,
      statusCode: 411,
      code: 'length_required',
      name: 'length_required',
    });
    const unknown = (headers: Record<string, string>) =>
      matches(rule('BodyLengthUnknown').Statement as WafStatement, { method: 'POST', path: '/v1/emails', headers });
    expect(unknown({ 'Transfer-Encoding': 'chunked' })).toBe(true);
    expect(unknown({ 'transfer-encoding': 'gzip, chunked' })).toBe(true);
    expect(unknown({ 'Transfer-Encoding': 'chunked', 'Content-Length': '10' })).toBe(true);
    expect(unknown({ 'Content-Length': '10' })).toBe(false);
    expect(unknown({})).toBe(false);
  });

  it('are evaluated after the per-IP limits (oversized floods still count) and before the managed groups', () => {
    for (const size of ['BodyTooLarge', 'BodyLengthUnknown']) {
      expect(rule(size).Priority).toBeGreaterThan(rule('FloodPerIp').Priority);
      for (const name of ['AWSManagedRulesAmazonIpReputationList', 'AWSManagedRulesKnownBadInputsRuleSet']) {
        expect(rule(size).Priority).toBeLessThan(rule(name).Priority);
      }
    }
  });

  it('hold only while API Gateway does not decompress bodies: no MinimumCompressionSize on the API', () => {
    // With content encoding on, a small gzip Content-Length could expand past the event limit behind the WAF.
    const restApi = only(api, 'AWS::ApiGateway::RestApi').properties;
    expect(restApi.MinimumCompressionSize).toBeUndefined();
  });

  it('matches the API function: SF_MAX_SEND_BODY_BYTES is the same ceiling', () => {
    const fns = Object.values(api.findResources('AWS::Lambda::Function')) as {
      Properties: { Environment?: { Variables?: Record<string, unknown> } };
    }[];
    const apiFn = fns.find((f) => f.Properties.Environment?.Variables?.POWERTOOLS_SERVICE_NAME === 'sendflow-api');
    expect(apiFn?.Properties.Environment?.Variables?.SF_MAX_SEND_BODY_BYTES).toBe(String(MAX_SEND_BODY_BYTES));
  });
});

describe('WAF rule order', () => {
  it('give links a wider limit than anonymous traffic and a narrower one than the flood ceiling', () => {
    const limit = (name: string) => rule(name).Statement.RateBasedStatement?.Limit ?? 0;
    expect(limit('LinkPerIp')).toBeGreaterThan(limit('AnonymousPerIp'));
    expect(limit('LinkPerIp')).toBeLessThan(limit('FloodPerIp'));
  });

  it('evaluate the link rule before the flood ceiling and the managed groups', () => {
    expect(rule('AnonymousPerIp').Priority).toBeLessThan(rule('LinkPerIp').Priority);
    expect(rule('LinkPerIp').Priority).toBeLessThan(rule('FloodPerIp').Priority);
  });
});

describe('link path pattern', () => {
  // PCRE for WAF; this subset means the same in JavaScript.
  const link = new RegExp(linkPathPattern(STAGE));
  const unsubscribe = signToken('unsubscribe', { emailId: 'em_1', recipient: 'a@example.com' }, 'x'.repeat(32));
  const confirm = signToken('confirm', { contactId: 'ct_1' }, 'x'.repeat(32));

  it('matches every public link the app signs, on the stage path', () => {
    expect(link.test(`/v1/unsubscribe/${unsubscribe}`)).toBe(true);
    expect(link.test(`/v1/contacts/confirm/${confirm}`)).toBe(true);
  });

  it('matches them with the base path stripped too (custom domain, whichever path WAF sees)', () => {
    expect(link.test(`/unsubscribe/${unsubscribe}`)).toBe(true);
    expect(link.test(`/contacts/confirm/${confirm}`)).toBe(true);
  });

  it('leaves other paths and malformed tokens to the anonymous rule', () => {
    for (const path of [
      '/v1/emails',
      `/v1/emails/${unsubscribe}`,
      `/v2/unsubscribe/${unsubscribe}`,
      `/v1/v1/unsubscribe/${unsubscribe}`,
      `/V1/unsubscribe/${unsubscribe}`,
      '/v1/unsubscribe/not-a-token',
      `/v1/unsubscribe/${unsubscribe}/extra`,
      `/v1/unsubscribe/x/../../emails/${unsubscribe}`,
      `/v1/contacts/confirm/${confirm}x`,
      `/v1/contacts/confirmx/${confirm}`,
    ]) {
      expect(link.test(path), path).toBe(false);
    }
  });
});

describe('keyed path patterns', () => {
  it('split a method whose paths need more than one WAF regex, each within 512 characters, matching the same', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      id: `r${i}`,
      method: 'GET',
      path: `/resource-number-${i}/{id}/child-collection`,
      access: 'full' as const,
      summary: '',
    }));
    const [patterns = []] = keyedPathPatterns(STAGE, many as never).values();
    expect(patterns.length).toBeGreaterThan(1);
    for (const pattern of patterns) expect(pattern.length).toBeLessThanOrEqual(WAF_REGEX_MAX_LENGTH);
    const keyed = (path: string) => patterns.some((pattern) => new RegExp(pattern).test(path));
    for (let i = 0; i < 40; i++) expect(keyed(`/v1/resource-number-${i}/x_1/child-collection`), String(i)).toBe(true);
    expect(keyed('/v1/resource-number-40/x_1/child-collection')).toBe(false);
  });

  it('exclude exactly the static siblings from a parameter segment', () => {
    const segment = new RegExp(`^${segmentExcept(['batch', 'b', 'confirm'])}$`);
    for (const word of ['batch', 'b', 'confirm']) expect(segment.test(word), word).toBe(false);
    for (const word of ['ba', 'bat', 'batchx', 'bb', 'c', 'conf', 'confirmed', 'em_1', 'x']) {
      expect(segment.test(word), word).toBe(true);
    }
    for (const word of ['', 'a/b', 'em%2F1']) expect(segment.test(word), word).toBe(false);
  });
});
