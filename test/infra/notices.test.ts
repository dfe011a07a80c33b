// The accounts' notices on AWS (issue 29 item 5): a stage's `sendflow:noticeFrom` reaches exactly the functions
// where notices arise (the API's two, the dispatcher, the SES mapper, the delivery worker) as SF_NOTICE_FROM,
// with ses:SendEmail on the sender's identity only for that From address, and the reads of the account and the
// day's claim the notice takes; a stage without one grants none of it; a bad value is refused at synth. Unsent
// notices (no sender, or SES refused) are counted by a metric filter on those functions' log groups.
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { synthSendflow } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const FROM = 'notices@mail.example.com';
const NOTIFYING = [
  'sendflow-api',
  'sendflow-public',
  'sendflow-delivery',
  'sendflow-dispatcher',
  'sendflow-ses-events',
].sort();

const list = <T>(v: T | T[]) => (Array.isArray(v) ? v : [v]);

/** Each function of the stack by its service name: its environment and its role's statements. */
function functionsOf(template: Template) {
  const resources = template.toJSON().Resources as Resources;
  const out = new Map<string, { env: Record<string, unknown>; role: string; statements: Statement[] }>();
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const env = ((resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
      {}) as Record<string, unknown>;
    const service = env.POWERTOOLS_SERVICE_NAME;
    if (typeof service !== 'string') continue;
    const role = String((resource.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]);
    const statements = Object.values(resources)
      // A role's statements past the inline policy's 10 KB go to its overflow managed policy (CDK): both count.
      .filter((r) => r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy')
      .filter((r) => ((r.Properties.Roles ?? []) as { Ref: string }[]).some((ref) => ref.Ref === role))
      .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
    out.set(service, { env, role, statements });
  }
  return out;
}

const sesSends = (statements: Statement[]) => statements.filter((s) => list(s.Action).includes('ses:SendEmail'));
const tableOf = (resource: unknown) => JSON.stringify(resource);

describe('notices on AWS: sendflow:noticeFrom', () => {
  let withSender: Template;
  let without: Template;

  beforeAll(() => {
    withSender = synthSendflow({ 'sendflow:noticeFrom': { prod: FROM, staging: 'ops@staging.example.com' } }).api;
    without = synthSendflow().api;
  });

  it('sets SF_NOTICE_FROM on exactly the functions where notices arise', () => {
    const functions = functionsOf(withSender);
    const withVariable = [...functions].filter(([, f]) => f.env.SF_NOTICE_FROM !== undefined).map(([name]) => name);

    expect(withVariable.sort()).toEqual(NOTIFYING);
    for (const name of NOTIFYING) expect(functions.get(name)?.env.SF_NOTICE_FROM).toBe(FROM);
  });

  it('lets them send only from the notice address, on its identity (ses:FromAddress)', () => {
    const functions = functionsOf(withSender);
    for (const name of NOTIFYING) {
      const notice = sesSends(functions.get(name)?.statements ?? []).filter((s) => s.Condition?.StringEquals);
      const scoped = notice.filter((s) => s.Condition?.StringEquals?.['ses:FromAddress'] !== undefined);

      expect(scoped, name).toHaveLength(1);
      const [statement] = scoped as [Statement];
      expect(list(statement.Action)).toEqual(['ses:SendEmail']);
      expect(statement.Condition).toEqual({ StringEquals: { 'ses:FromAddress': FROM } });
      const resources = list(statement.Resource as unknown[]);
      expect(resources).toHaveLength(1);
      const arn = JSON.stringify(resources[0]);
      expect(arn).toContain(':ses:');
      expect(arn).toContain('identity/mail.example.com"');
      expect(arn).not.toContain('*');
    }
  });

  it('grants no broader send: ses:SendEmail without the From condition stays the send worker’s own', () => {
    const functions = functionsOf(withSender);
    for (const [name, fn] of functions) {
      const unscoped = sesSends(fn.statements).filter(
        (s) => s.Condition?.StringEquals?.['ses:FromAddress'] === undefined,
      );
      if (name === 'sendflow-sender') continue;
      expect(unscoped, name).toEqual([]);
    }
    // The send worker sends tenants' mail, not notices: it gets neither the variable nor the notice grant.
    const sender = functions.get('sendflow-sender');
    expect(sender?.env.SF_NOTICE_FROM).toBeUndefined();
    expect(sesSends(sender?.statements ?? []).some((s) => s.Condition?.StringEquals?.['ses:FromAddress'])).toBe(false);
  });

  it('lets the event processors and the delivery worker read the account and take the day’s claim (notice# only)', () => {
    const functions = functionsOf(withSender);
    for (const name of ['sendflow-delivery', 'sendflow-dispatcher', 'sendflow-ses-events']) {
      const statements = functions.get(name)?.statements ?? [];
      const accountReads = statements.filter(
        (s) => list(s.Action).includes('dynamodb:GetItem') && tableOf(s.Resource).includes('tablesaccounts'),
      );
      expect(accountReads, name).toHaveLength(1);
      expect(list((accountReads[0] as Statement).Action)).toEqual(['dynamodb:GetItem']);
      const claims = statements.filter(
        (s) => list(s.Action).includes('dynamodb:UpdateItem') && tableOf(s.Resource).includes('tablesrateLimits'),
      );
      // The delivery worker already updates rateLimits (pace items); the event processors only filtered# and notice#.
      if (name !== 'sendflow-delivery') {
        expect(claims.map((s) => s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'])).toContainEqual([
          'notice#*',
        ]);
      } else {
        expect(claims.length).toBeGreaterThan(0);
      }
    }
  });

  it('grants nothing of it, and sets no variable, on a stage without a notice sender', () => {
    const functions = functionsOf(without);
    for (const [name, fn] of functions) {
      expect(fn.env.SF_NOTICE_FROM, name).toBeUndefined();
      expect(
        sesSends(fn.statements).some((s) => s.Condition?.StringEquals?.['ses:FromAddress']),
        name,
      ).toBe(false);
    }
    for (const name of ['sendflow-delivery', 'sendflow-dispatcher', 'sendflow-ses-events']) {
      const statements = functions.get(name)?.statements ?? [];
      expect(
        statements.some((s) => tableOf(s.Resource).includes('tablesaccounts')),
        name,
      ).toBe(false);
      expect(JSON.stringify(statements)).not.toContain('notice#');
    }
  });

  it('counts unsent notices with a metric filter on each notifying function’s log group, sender or not', () => {
    for (const template of [withSender, without]) {
      const filters = Object.values(template.findResources('AWS::Logs::MetricFilter') as Resources).filter((f) =>
        JSON.stringify(f.Properties.MetricTransformations).includes('NoticesNotSent'),
      );
      // The API and public function have log groups of their own; five functions in all.
      expect(filters).toHaveLength(5);
      for (const filter of filters) {
        expect(filter.Properties.FilterPattern).toBe('{ $.message = "account notice not sent*" }');
      }
    }
  });

  it('refuses at synth a value that is not an address on a domain, naming the setting and the stage', () => {
    for (const bad of ['not-an-address', 'ops@localhost', 'ops@example.com\nBcc: x@y.z', 42, { prod: 'x' }]) {
      expect(() => synthSendflow({ 'sendflow:noticeFrom': { prod: bad } }), String(bad)).toThrow(
        /sendflow:noticeFrom.*prod/,
      );
    }
    // Another stage's entry is checked too: a typo anywhere fails every synth.
    expect(() => synthSendflow({ 'sendflow:noticeFrom': { staging: 'nope' } })).toThrow(/staging/);
  });

  it('accepts an identity that covers the address: the address itself, its domain or a parent domain', () => {
    const byAddress = synthSendflow({
      'sendflow:noticeFrom': { prod: { address: FROM, identity: FROM } },
    }).api;
    const statement = sesSends(functionsOf(byAddress).get('sendflow-delivery')?.statements ?? []).find(
      (s) => s.Condition?.StringEquals?.['ses:FromAddress'],
    );
    expect(JSON.stringify(statement?.Resource)).toContain(`identity/${FROM}"`);
    const byParent = synthSendflow({ 'sendflow:noticeFrom': { prod: { address: FROM, identity: 'example.com' } } }).api;
    const parent = sesSends(functionsOf(byParent).get('sendflow-delivery')?.statements ?? []).find(
      (s) => s.Condition?.StringEquals?.['ses:FromAddress'],
    );
    expect(JSON.stringify(parent?.Resource)).toContain('identity/example.com"');
    expect(() =>
      synthSendflow({ 'sendflow:noticeFrom': { prod: { address: FROM, identity: 'other.example.org' } } }),
    ).toThrow(/identity/);
  });
});
