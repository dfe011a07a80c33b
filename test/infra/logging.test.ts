// Every Sendflow function's logging as synthesized (lib/constructs/node-function.ts): JSON format, so Lambda
// filters by level; application lines from INFO (EMF metric lines carry no level and count as INFO: a
// higher level would drop the metrics); Lambda's own START/END/REPORT lines (system level INFO) dropped at WARN.
// And every log group expires: each function's, the access log, and the execution log group API Gateway creates.
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CONTEXT_INBOUND } from '../../lib/inbound-settings';
import { only, synthSendflow } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

describe('function logging', () => {
  it('gives every Sendflow function JSON logs, application level INFO and system level WARN', () => {
    // Arrange
    const { api, data } = synthSendflow();

    // Act
    const functions = [api, data].flatMap((t) =>
      Object.values(t.findResources('AWS::Lambda::Function') as Resources).filter(
        (fn) =>
          (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
            ?.POWERTOOLS_SERVICE_NAME,
      ),
    );

    // Assert: the seven functions of the api stack and the stage guard, all alike.
    expect(functions.length).toBeGreaterThanOrEqual(8);
    for (const fn of functions) {
      expect(fn.Properties.LoggingConfig).toEqual({
        LogFormat: 'JSON',
        ApplicationLogLevel: 'INFO',
        SystemLogLevel: 'WARN',
        LogGroup: { Ref: expect.stringMatching(/Logs/) },
      });
    }
  });
});

/** Log groups of a template by logical id, and the functions with where each writes its log lines. */
function logTargets(template: Template) {
  const resources = template.toJSON().Resources as Resources;
  const groups = Object.fromEntries(Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Logs::LogGroup'));
  const functions = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
  /** Whether a role may write log lines anywhere: its attached policies, its own, or a managed one. */
  const roleWritesLogs = (roleId: string) => {
    const role = resources[roleId]?.Properties ?? {};
    const attached = Object.values(resources).filter(
      (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(`"${roleId}"`),
    );
    return (
      JSON.stringify([role.Policies, attached.map((p) => p.Properties.PolicyDocument)]).includes('logs:PutLogEvents') ||
      role.ManagedPolicyArns !== undefined
    );
  };
  return { groups, functions, roleWritesLogs, resources };
}

describe('log retention', () => {
  const variants: [string, Record<string, unknown>][] = [
    ['default', {}],
    ['receiving email, rule set activated', { [CONTEXT_INBOUND]: { prod: { region: 'eu-west-1', activate: true } } }],
  ];

  it.each(variants)('every log group of every stack expires (%s)', (_name, context) => {
    const { api, data } = synthSendflow(context);
    for (const template of [api, data]) {
      const { groups } = logTargets(template);
      expect(Object.keys(groups).length).toBeGreaterThan(0);
      for (const [id, group] of Object.entries(groups)) expect(group.Properties.RetentionInDays, id).toBeGreaterThan(0);
    }
  });

  it.each(variants)(
    'every function writes to a log group of its stack (which expires), or cannot write logs at all (%s)',
    (_name, context) => {
      // A function whose log group is not in the template gets /aws/lambda/<name> from Lambda, which never expires.
      const { api, data } = synthSendflow(context);
      for (const template of [api, data]) {
        const { groups, functions, roleWritesLogs } = logTargets(template);
        for (const [id, fn] of functions) {
          const target = (fn.Properties.LoggingConfig as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup?.Ref;
          if (target) {
            expect(groups[target]?.Properties.RetentionInDays, `${id} → ${target}`).toBeGreaterThan(0);
            continue;
          }
          const role = (fn.Properties.Role as { 'Fn::GetAtt'?: [string] })['Fn::GetAtt']?.[0] ?? '';
          expect({ id, writesLogs: roleWritesLogs(role) }).toEqual({ id, writesLogs: false });
        }
      }
    },
  );

  it('sets a retention on the execution log group API Gateway creates for the stage (API-Gateway-Execution-Logs_<id>/v1)', () => {
    // Arrange
    const { api } = synthSendflow();
    const restApi = only(api, 'AWS::ApiGateway::RestApi').id;
    const stage = only(api, 'AWS::ApiGateway::Stage').properties;

    // Act
    const retentions = Object.values(api.findResources('Custom::LogRetention') as Resources).map((r) => r.Properties);

    // Assert: execution logging is on (errors), so the group exists once the stage logs; its retention is managed.
    expect(JSON.stringify(stage.MethodSettings)).toContain('"LoggingLevel":"ERROR"');
    expect(retentions).toContainEqual(
      expect.objectContaining({
        LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: restApi }, '/v1']] },
        RetentionInDays: 30,
      }),
    );
  });
});
