// Deployment stages (lib/app.ts, lib/outputs.ts): `-c sendflow:stage=NAME` qualifies every stack and physical
// name, so two stages synthesize with no name in common and deploy side by side in one account and region;
// the default stage needs no context; a bad name stops synth with a clear message. Also what makes a redeploy
// safe: nothing retained keeps a fixed name, and the data stack's guard (a custom resource whose role may only
// list tagged resources and its own stack's) runs before any table or the secret is created.
import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableNames, tables } from '../../lambdas/manifest';
import { buildSendflow, CONTEXT_ADOPT, CONTEXT_STAGE, settingsFromContext } from '../../lib/app';
import { STAGE_GUARD_TYPE } from '../../lib/constructs/stage-guard';
import { DEFAULT_STAGE, parseStage, stackNames } from '../../lib/outputs';
import { SKIP_BUNDLING, synthSendflow } from './synth';

type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  DependsOn?: string[];
};
type Synth = ReturnType<typeof synthSendflow>;

let prod: Synth;
let staging: Synth;

beforeAll(() => {
  prod = synthSendflow();
  staging = synthSendflow({ [CONTEXT_STAGE]: 'staging' });
});

const templates = (synth: Synth): Template[] => [synth.data, synth.api];
const resourcesOf = (template: Template) => Object.entries(template.toJSON().Resources as Record<string, Resource>);

/**
 * Properties named *Name that name something inside another resource, or no resource at all: never unique per
 * account and region, so two stages may share them.
 */
const SCOPED_NAMES = new Set([
  // an inline policy's name is unique per role
  'AWS::IAM::Policy.PolicyName',
  // the API Gateway stage (v1), its methods' operation names and its authorizer are scoped to their REST API
  'AWS::ApiGateway::Stage.StageName',
  'AWS::ApiGateway::Method.OperationName',
  'AWS::ApiGateway::Authorizer.Name',
  // the metric an alarm watches (ApproximateAgeOfOldestMessage), told apart by its dimensions
  'AWS::CloudWatch::Alarm.MetricName',
  // an alias name (`live`) is unique per function
  'AWS::Lambda::Alias.Name',
  // names one of CodeDeploy's predefined configurations (CodeDeployDefault.LambdaCanary10Percent5Minutes)
  'AWS::CodeDeploy::DeploymentGroup.DeploymentConfigName',
]);

/**
 * Every physical name a template sets, as `value → Type.Property (logical id)`: each top-level property named
 * Name or *Name holding a literal (an object is a reference to another resource, not a name), the web ACL's
 * metric name, and the SSM parameter names the api stack resolves at deploy time.
 */
function physicalNames(template: Template): Map<string, string> {
  const names = new Map<string, string>();
  for (const [id, resource] of resourcesOf(template)) {
    for (const [key, value] of Object.entries(resource.Properties ?? {})) {
      if (!/Name$/.test(key) || typeof value !== 'string' || SCOPED_NAMES.has(`${resource.Type}.${key}`)) continue;
      names.set(value, `${resource.Type}.${key} (${id})`);
    }
    if (resource.Type === 'AWS::WAFv2::WebACL') {
      const visibility = resource.Properties?.VisibilityConfig as { MetricName: string };
      names.set(visibility.MetricName, `${resource.Type}.VisibilityConfig.MetricName`);
    }
  }
  const parameters = (template.toJSON().Parameters ?? {}) as Record<string, { Type: string; Default?: string }>;
  for (const [id, parameter] of Object.entries(parameters)) {
    // CDK's own BootstrapVersion parameter reads the bootstrap stack's, shared by design.
    if (parameter.Type.startsWith('AWS::SSM::Parameter::Value') && id !== 'BootstrapVersion') {
      names.set(String(parameter.Default), `Parameters.${id}`);
    }
  }
  return names;
}

describe('two stages side by side', () => {
  it('have stage-qualified stack names: Sendflow-<stage>-Data and Sendflow-<stage>-Api', () => {
    expect([prod.stacks.data.stackName, prod.stacks.api.stackName]).toEqual([
      'Sendflow-prod-Data',
      'Sendflow-prod-Api',
    ]);
    expect([staging.stacks.data.stackName, staging.stacks.api.stackName]).toEqual([
      'Sendflow-staging-Data',
      'Sendflow-staging-Api',
    ]);
    expect(stackNames('staging')).toEqual({ data: 'Sendflow-staging-Data', api: 'Sendflow-staging-Api' });
  });

  it('share no physical name', () => {
    // Arrange
    const prodNames = templates(prod).map(physicalNames);
    const stagingNames = templates(staging).map(physicalNames);
    const all = (maps: Map<string, string>[]) => new Map(maps.flatMap((m) => [...m]));

    // Act
    const shared = [...all(prodNames).entries()].filter(([name]) => all(stagingNames).has(name));

    // Assert: the check looks at something (groups, parameters, alarms, plans, configuration set, API, web ACL).
    expect(shared).toEqual([]);
    expect(all(prodNames).size).toBeGreaterThan(tableNames.length + 15);
  });

  it('qualify every physical name with the stack name, which carries the stage', () => {
    for (const synth of [prod, staging]) {
      const stage = synth.stacks.stage;
      for (const [name, where] of templates(synth).flatMap((t) => [...physicalNames(t)])) {
        expect({ where, qualified: name.includes(`Sendflow-${stage}-`) }).toEqual({ where, qualified: true });
      }
    }
  });

  it.each([
    ['AWS::Scheduler::ScheduleGroup', 'Name', ['Sendflow-staging-Api-retries', 'Sendflow-staging-Api-sends']],
    [
      'AWS::SES::ConfigurationSet',
      'Name',
      ['', '-click', '-open', '-open-click'].map((tracking) => `Sendflow-staging-Api-email-events${tracking}`),
    ],
    ['AWS::ApiGateway::RestApi', 'Name', ['Sendflow-staging-Api']],
    ['AWS::WAFv2::WebACL', 'Name', ['Sendflow-staging-Api']],
  ])('name %s after the stage', (type, property, expected) => {
    const values = resourcesOf(staging.api)
      .filter(([, r]) => r.Type === type)
      .map(([, r]) => r.Properties?.[property]);
    expect(values.sort()).toEqual(expected);
  });

  it('give every alarm a stage-qualified name', () => {
    const alarms = resourcesOf(staging.api).filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(0);
    for (const [, alarm] of alarms) expect(alarm.Properties?.AlarmName).toMatch(/^Sendflow-staging-Api-/);
  });

  it('publish table names, the bodies bucket and the secret ARN under parameters of their own stage', () => {
    const parameterNames = resourcesOf(staging.data)
      .filter(([, r]) => r.Type === 'AWS::SSM::Parameter')
      .map(([, r]) => r.Properties?.Name);
    expect(parameterNames.sort()).toEqual(
      [
        ...tableNames.map((t) => `/Sendflow-staging-Data/tables/${t}`),
        '/Sendflow-staging-Data/signing-secret',
        '/Sendflow-staging-Data/email-bodies-bucket',
      ].sort(),
    );
  });

  it('tag every stack with sendflow:stage', () => {
    for (const synth of [prod, staging]) {
      for (const stack of [synth.stacks.data, synth.stacks.api]) {
        expect(stack.tags.tagValues()).toEqual(expect.objectContaining({ 'sendflow:stage': synth.stacks.stage }));
      }
    }
  });
});

describe('the stage setting', () => {
  it('defaults to prod without context', () => {
    expect(DEFAULT_STAGE).toBe('prod');
    expect(settingsFromContext(new App()).stage).toBe('prod');
    expect(prod.stacks.stage).toBe('prod');
  });

  it.each(['staging', 'dev-alice', 'a', 'a'.repeat(20), 'e2e'])('accepts %j', (stage) => {
    expect(settingsFromContext(new App({ context: { [CONTEXT_STAGE]: stage } })).stage).toBe(stage);
  });

  it.each([['Prod'], ['1st'], ['-x'], ['a'.repeat(21)], [''], ['st_aging'], ['st aging'], [true]])(
    'refuses %j with a clear message',
    (stage) => {
      const app = new App({ context: { [CONTEXT_STAGE]: stage } });
      expect(() => settingsFromContext(app)).toThrow(
        /^Context sendflow:stage: Invalid Sendflow stage .*: use 1 to 20 lowercase letters, digits or hyphens, starting with a letter/,
      );
    },
  );

  it('refuses a bad stage handed to buildSendflow directly, before building anything', () => {
    const app = new App({ context: SKIP_BUNDLING });
    expect(() => buildSendflow(app, { authorizerCacheTtlSeconds: 60, stage: 'Bad Stage' })).toThrow(
      /Invalid Sendflow stage "Bad Stage"/,
    );
    expect(app.node.children.filter((c) => c instanceof Stack)).toEqual([]);
    expect(() => parseStage('x'.repeat(21))).toThrow(/1 to 20/);
  });
});

describe('safe redeploys', () => {
  it('nothing retained keeps a fixed name', () => {
    for (const template of templates(staging)) {
      for (const [id, resource] of resourcesOf(template)) {
        if (resource.DeletionPolicy === undefined || resource.DeletionPolicy === 'Delete') continue;
        // A literal name; an object refers to another resource (a retained version's FunctionName, its function).
        const fixed = Object.entries(resource.Properties ?? {})
          .filter(([key, value]) => /Name$/.test(key) && typeof value === 'string')
          .map(([key]) => key);
        expect({ id, type: resource.Type, fixed }).toEqual({ id, type: resource.Type, fixed: [] });
      }
    }
  });

  it('retains exactly the manifest tables marked retain, the email bodies bucket, and the secret (unless its own creation rolls back)', () => {
    const retained = resourcesOf(staging.data).filter(
      ([, r]) => r.DeletionPolicy?.startsWith('Retain') && r.Type !== 'AWS::Logs::LogGroup',
    );
    expect(retained.map(([, r]) => [r.Type, r.DeletionPolicy]).sort()).toEqual(
      [
        ...tableNames.filter((t) => tables[t].retain).map(() => ['AWS::DynamoDB::GlobalTable', 'Retain']),
        ['AWS::SecretsManager::Secret', 'RetainExceptOnCreate'],
        ['AWS::S3::Bucket', 'Retain'],
      ].sort(),
    );
  });

  it('Scheduler groups go with the api stack (their schedules target its queues)', () => {
    const groups = resourcesOf(staging.api).filter(([, r]) => r.Type === 'AWS::Scheduler::ScheduleGroup');
    expect(groups).toHaveLength(2);
    for (const [, group] of groups) expect(group.DeletionPolicy).toBe('Delete');
  });

  it('the secret carries the stage tag and no name', () => {
    const [[, secret]] = resourcesOf(staging.data).filter(([, r]) => r.Type === 'AWS::SecretsManager::Secret') as [
      [string, Resource],
    ];
    expect(secret.Properties?.Name).toBeUndefined();
    expect(secret.Properties?.Tags).toContainEqual({ Key: 'sendflow:stage', Value: 'staging' });
  });

  it('the data stack has termination protection; the api stack is disposable', () => {
    expect(staging.stacks.data.terminationProtection).toBe(true);
    expect(staging.stacks.api.terminationProtection).toBe(false);
  });
});

describe('the data-stack guard', () => {
  const guardOf = (synth: Synth) => {
    const found = resourcesOf(synth.data).filter(([, r]) => r.Type === STAGE_GUARD_TYPE);
    expect(found).toHaveLength(1);
    return found[0] as [string, Resource];
  };

  it('is a custom resource told the stage tag and this stack id', () => {
    const [, guard] = guardOf(staging);
    expect(guard.Properties).toEqual({
      ServiceToken: expect.anything(),
      TagKey: 'sendflow:stage',
      Stage: 'staging',
      StackId: { Ref: 'AWS::StackId' },
    });
  });

  it('runs before any table or the secret exists: each depends on it, so a refusal creates nothing', () => {
    const [guardId] = guardOf(staging);
    const data = resourcesOf(staging.data).filter(
      ([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable' || r.Type === 'AWS::SecretsManager::Secret',
    );
    expect(data).toHaveLength(tableNames.length + 1);
    for (const [id, resource] of data)
      expect({ id, dependsOn: resource.DependsOn }).toEqual({ id, dependsOn: [guardId] });
  });

  it('is served by the Provider framework, which invokes the guard function (ESM, Node 22)', () => {
    const [, guard] = guardOf(staging);
    const serviceToken = guard.Properties?.ServiceToken as { 'Fn::GetAtt': [string, string] };
    const functions = Object.fromEntries(
      resourcesOf(staging.data).filter(([, r]) => r.Type === 'AWS::Lambda::Function'),
    );
    const framework = functions[serviceToken['Fn::GetAtt'][0]];
    const environment = (framework as Resource).Properties.Environment as { Variables: Record<string, unknown> };
    const target = environment.Variables.USER_ON_EVENT_FUNCTION_ARN as { 'Fn::GetAtt': [string, string] };
    const guardFunction = functions[target['Fn::GetAtt'][0]];
    expect(guardFunction?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Handler: 'index.handler',
      Environment: { Variables: { POWERTOOLS_SERVICE_NAME: 'sendflow-stage-guard' } },
    });
  });

  it("the guard function's role may list tagged resources and its own stack's resources, nothing else", () => {
    // Arrange
    const functions = resourcesOf(staging.data).filter(
      ([, r]) =>
        r.Type === 'AWS::Lambda::Function' &&
        (r.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
          ?.POWERTOOLS_SERVICE_NAME === 'sendflow-stage-guard',
    );
    const roleId = ((functions[0]?.[1].Properties?.Role as { 'Fn::GetAtt': [string] }) ?? { 'Fn::GetAtt': [''] })[
      'Fn::GetAtt'
    ][0];
    const statements = resourcesOf(staging.data)
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy')
      .filter(([, r]) => (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
      .flatMap(
        ([, r]) =>
          (r.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement,
      );

    // Act
    const actions = statements.flatMap((s) => [s.Action].flat()).sort();

    // Assert
    expect(actions).toEqual([
      'cloudformation:ListStackResources',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'tag:GetResources',
    ]);
    expect(statements.find((s) => s.Action === 'cloudformation:ListStackResources')?.Resource).toEqual({
      Ref: 'AWS::StackId',
    });
    expect(statements.find((s) => s.Action === 'tag:GetResources')?.Resource).toBe('*');
    const managed = resourcesOf(staging.data).find(([id]) => id === roleId)?.[1].Properties?.ManagedPolicyArns;
    expect(managed).toBeUndefined();
  });

  it('no role in the data stack carries a managed policy (the framework role included)', () => {
    for (const [, role] of resourcesOf(staging.data).filter(([, r]) => r.Type === 'AWS::IAM::Role')) {
      expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
    }
  });
});

/**
 * What `cdk import` of a stage's retained data into a new data stack sends CloudFormation: the imported resources
 * alone (CDK adds them to the empty current template). Returns every logical id they refer to (Ref, Fn::GetAtt,
 * DependsOn) that is not among them: CloudFormation rejects such a template as unresolved.
 */
function danglingInImportTemplate(template: Template): string[] {
  const imported = resourcesOf(template).filter(
    ([, r]) =>
      (r.Type === 'AWS::DynamoDB::GlobalTable' && r.DeletionPolicy === 'Retain') ||
      r.Type === 'AWS::SecretsManager::Secret',
  );
  const ids = new Set(imported.map(([id]) => id));
  const referenced = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string' && !inner.startsWith('AWS::')) referenced.add(inner);
      if (key === 'Fn::GetAtt' && Array.isArray(inner)) referenced.add(String(inner[0]));
      walk(inner);
    }
  };
  for (const [, resource] of imported) {
    walk(resource.Properties);
    for (const dependency of resource.DependsOn ?? []) referenced.add(dependency);
  }
  return [...referenced].filter((id) => !ids.has(id));
}

describe('re-adopting retained data (cdk import)', () => {
  it('the deployed template cannot be imported as is: its data waits for the guard', () => {
    expect(danglingInImportTemplate(staging.data)).toEqual([guardLogicalId(staging)]);
  });

  it('-c sendflow:adopt=true synthesizes the data for import: no dependency outside the imported resources', () => {
    // Arrange
    const adopting = synthSendflow({ [CONTEXT_STAGE]: 'staging', [CONTEXT_ADOPT]: 'true' });

    // Act & Assert: same resources, same logical ids, only the dependency is gone.
    expect(danglingInImportTemplate(adopting.data)).toEqual([]);
    expect(Object.keys(adopting.data.toJSON().Resources).sort()).toEqual(
      Object.keys(staging.data.toJSON().Resources).sort(),
    );
    expect(settingsFromContext(new App({ context: { [CONTEXT_ADOPT]: true } })).adopt).toBe(true);
    expect(() => settingsFromContext(new App({ context: { [CONTEXT_ADOPT]: 'yes' } }))).toThrow(
      'Context sendflow:adopt must be true or false, got yes',
    );
  });
});

function guardLogicalId(synth: Synth): string {
  const [id] = Object.keys(synth.data.findResources(STAGE_GUARD_TYPE));
  return id as string;
}
