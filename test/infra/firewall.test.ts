// The WAF's public-link rule: one-click unsubscribe and confirmation links have their own per-IP limit, the
// anonymous limit does not count them, and the URI pattern matches exactly the links the app signs.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../lambdas/domain/tokens';
import { PUBLIC_ROUTE_IP_FACTOR } from '../../lambdas/handlers/middleware/rate-limit';
import { STAGE } from '../../lambdas/manifest';
import { linkPathPattern } from '../../lib/constructs/firewall';
import { only, synthSendflow } from './synth';

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

  it('leave the link routes out of the anonymous per-IP rule', () => {
    const scopeDown = rule('AnonymousPerIp').Statement.RateBasedStatement?.ScopeDownStatement as {
      AndStatement: { Statements: unknown[] };
    };
    expect(scopeDown.AndStatement.Statements).toContainEqual({ NotStatement: { Statement: linkStatement } });
    expect(scopeDown.AndStatement.Statements).toHaveLength(2);
  });

  it('count dashboard pages as anonymous even with a well-formed key in Authorization (no authorizer checks it there)', () => {
    const scopeDown = rule('AnonymousPerIp').Statement.RateBasedStatement?.ScopeDownStatement as {
      AndStatement: { Statements: { OrStatement?: { Statements: Record<string, { RegexString?: string }>[] } }[] };
    };
    const either = scopeDown.AndStatement.Statements.find((s) => s.OrStatement)?.OrStatement?.Statements ?? [];
    const dashboard = either.find((s) => s.RegexMatchStatement)?.RegexMatchStatement?.RegexString ?? '';
    expect(either).toHaveLength(2);
    expect(either.some((s) => 'NotStatement' in s)).toBe(true);
    const matches = (path: string) => new RegExp(dashboard).test(path);
    expect(['/v1/dashboard', '/v1/dashboard/webhooks/wh_1', '/dashboard/sign-in'].every(matches)).toBe(true);
    expect(['/v1/emails', '/v1/dashboards', '/v1/webhooks/dashboard'].some(matches)).toBe(false);
  });

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
