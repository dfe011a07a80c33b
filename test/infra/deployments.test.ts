// Safe deploys (lib/constructs/deployments.ts): every function of the api stack runs behind a `live` alias on a
// published version, which CodeDeploy moves to each new version by canary (10% for 5 minutes, then all) and moves
// back when the deployment fails, is stopped, or one of its alarms fires. Everything that invokes a function
// invokes its alias: SQS event sources, the API's integrations and authorizer, the reconciler's schedule, SES
// receiving. Versions are retained, so the one before stays there to go back to.

import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT_UNMONITORED_STAGES } from '../../lib/alarm-settings';
import { CONTEXT_DEPLOYMENT, parseDeploymentStyle } from '../../lib/constructs/deployments';
import { CONTEXT_INBOUND } from '../../lib/inbound-settings';
import { synthSendflow } from './synth';

type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string; UpdatePolicy?: unknown }
>;

/** Each function's logical id by its POWERTOOLS_SERVICE_NAME. */
function functionsByService(template: Template): Map<string, string> {
  const functions = template.findResources('AWS::Lambda::Function') as Resources;
  const byService = new Map<string, string>();
  for (const [id, fn] of Object.entries(functions)) {
    const env = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
    if (typeof env?.POWERTOOLS_SERVICE_NAME === 'string') byService.set(env.POWERTOOLS_SERVICE_NAME, id);
  }
  return byService;
}

const refOf = (value: unknown) => (value as { Ref?: string } | undefined)?.Ref;

/** The alias of a function: its logical id, and the version logical id it points at. */
function aliasOf(template: Template, functionId: string): { id: string; versionId: string } {
  const aliases = Object.entries(template.findResources('AWS::Lambda::Alias') as Resources).filter(
    ([, alias]) => refOf(alias.Properties.FunctionName) === functionId,
  );
  expect(aliases).toHaveLength(1);
  const [id, alias] = aliases[0] as [string, Resources[string]];
  const version = alias.Properties.FunctionVersion as { 'Fn::GetAtt': [string, string] };
  return { id, versionId: version['Fn::GetAtt'][0] };
}

/** The deployment group that moves a function's alias. */
function groupOf(template: Template, functionId: string): Resources[string] {
  const resources = template.toJSON().Resources as Resources;
  const alias = resources[aliasOf(template, functionId).id];
  const update = (alias?.UpdatePolicy ?? {}) as { CodeDeployLambdaAliasUpdate?: { DeploymentGroupName?: unknown } };
  const group = resources[refOf(update.CodeDeployLambdaAliasUpdate?.DeploymentGroupName) ?? ''];
  if (!group) throw new Error(`no deployment group moves the alias of ${functionId}`);
  return group;
}

const SERVICES = [
  'sendflow-api',
  'sendflow-authorizer',
  'sendflow-public',
  'sendflow-dispatcher',
  'sendflow-delivery',
  'sendflow-reconciler',
  'sendflow-sender',
  'sendflow-ses-events',
] as const;

/** The alarms (their AlarmName suffix after `Sendflow-prod-Api-`) each function's deployment rolls back on. */
const ROLLBACK_ALARMS: Readonly<Record<(typeof SERVICES)[number], readonly string[]>> = {
  'sendflow-api': ['ApiErrors', 'Api5xx'],
  'sendflow-authorizer': ['AuthorizerErrors', 'Api5xx'],
  'sendflow-public': ['PublicErrors', 'Api5xx'],
  'sendflow-dispatcher': ['DispatcherErrors', 'EventsDlqDepth'],
  'sendflow-delivery': ['DeliveryErrors', 'DeliveriesDlqDepth', 'SlowDeliveriesDlqDepth'],
  'sendflow-reconciler': ['ReconcilerErrors', 'ReconcileScheduleDlqDepth'],
  'sendflow-sender': ['SenderErrors', 'SendsDlqDepth'],
  'sendflow-ses-events': ['SesEventsErrors', 'ProviderEventsDlqDepth'],
};

let api: Template;
let data: Template;
let functions: Map<string, string>;
beforeAll(() => {
  ({ api, data } = synthSendflow());
  functions = functionsByService(api);
});

describe('live aliases and versions', () => {
  it.each(SERVICES)('%s runs behind a `live` alias on a published, retained version', (service) => {
    // Arrange
    const functionId = functions.get(service) ?? '';
    const resources = api.toJSON().Resources as Resources;

    // Act
    const { id, versionId } = aliasOf(api, functionId);

    // Assert
    expect(resources[id]?.Properties.Name).toBe('live');
    expect(resources[versionId]).toMatchObject({
      Type: 'AWS::Lambda::Version',
      DeletionPolicy: 'Retain',
      Properties: { FunctionName: { Ref: functionId } },
    });
  });

  it('gives the data stack’s stage guard (a deploy-time custom resource) no alias and no deployment', () => {
    expect(Object.keys(data.findResources('AWS::Lambda::Alias'))).toEqual([]);
    expect(Object.keys(data.findResources('AWS::CodeDeploy::DeploymentGroup'))).toEqual([]);
  });
});

describe('CodeDeploy', () => {
  it('has one Lambda application and one deployment group per function, each updating its alias', () => {
    api.resourceCountIs('AWS::CodeDeploy::Application', 1);
    api.hasResourceProperties('AWS::CodeDeploy::Application', { ComputePlatform: 'Lambda' });
    api.resourceCountIs('AWS::CodeDeploy::DeploymentGroup', SERVICES.length);
    const resources = api.toJSON().Resources as Resources;
    for (const service of SERVICES) {
      const { id } = aliasOf(api, functions.get(service) ?? '');
      const update = (resources[id]?.UpdatePolicy as { CodeDeployLambdaAliasUpdate?: Record<string, unknown> })
        ?.CodeDeployLambdaAliasUpdate;
      expect(update?.ApplicationName).toEqual({
        Ref: Object.keys(api.findResources('AWS::CodeDeploy::Application'))[0],
      });
      expect(resources[refOf(update?.DeploymentGroupName) ?? '']?.Type).toBe('AWS::CodeDeploy::DeploymentGroup');
    }
  });

  it.each(SERVICES)(
    '%s deploys by canary (10 percent for 5 minutes) and rolls back on failure, stop or alarm',
    (service) => {
      // Arrange
      const resources = api.toJSON().Resources as Resources;
      const group = groupOf(api, functions.get(service) ?? '');
      const alarms = (group.Properties.AlarmConfiguration as { Alarms: { Name: unknown }[] }).Alarms;
      const alarmNames = alarms.map(({ Name }) => {
        const alarm = resources[refOf(Name) ?? ''];
        return String(alarm ? alarm.Properties.AlarmName : Name).replace('Sendflow-prod-Api-', '');
      });

      // Assert
      expect(group.Properties).toMatchObject({
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
        DeploymentStyle: { DeploymentType: 'BLUE_GREEN', DeploymentOption: 'WITH_TRAFFIC_CONTROL' },
        AutoRollbackConfiguration: {
          Enabled: true,
          Events: expect.arrayContaining([
            'DEPLOYMENT_FAILURE',
            'DEPLOYMENT_STOP_ON_REQUEST',
            'DEPLOYMENT_STOP_ON_ALARM',
          ]),
        },
        AlarmConfiguration: { Enabled: true },
      });
      expect(alarmNames.sort()).toEqual([...ROLLBACK_ALARMS[service]].sort());
    },
  );

  it('takes each stage’s traffic shifting from sendflow:deployment (all at once for a developer’s stage)', () => {
    // Act
    const dev = synthSendflow({ [CONTEXT_DEPLOYMENT]: { dev: 'allAtOnce', prod: 'linear10PercentEvery1Minute' } });
    const devStage = synthSendflow({
      'sendflow:stage': 'dev',
      [CONTEXT_DEPLOYMENT]: { dev: 'allAtOnce' },
      // A developer's stage: nobody is paged for it (lib/alarm-settings.ts).
      [CONTEXT_UNMONITORED_STAGES]: ['dev'],
    });

    // Assert
    const configs = (template: Template) =>
      new Set(
        Object.values(template.findResources('AWS::CodeDeploy::DeploymentGroup') as Resources).map(
          (group) => group.Properties.DeploymentConfigName,
        ),
      );
    expect(configs(dev.api)).toEqual(new Set(['CodeDeployDefault.LambdaLinear10PercentEvery1Minute']));
    expect(configs(devStage.api)).toEqual(new Set(['CodeDeployDefault.LambdaAllAtOnce']));
  });

  it('refuses an unknown traffic shifting, naming the ones there are', () => {
    expect(() => parseDeploymentStyle({ prod: 'fast' }, 'prod')).toThrow(
      /sendflow:deployment: prod: "fast" is not one of canary10Percent5Minutes, linear10PercentEvery1Minute, allAtOnce/,
    );
    expect(() => parseDeploymentStyle('canary', 'prod')).toThrow(/sendflow:deployment must be a JSON object/);
    expect(parseDeploymentStyle(undefined, 'prod')).toBe('canary10Percent5Minutes');
    expect(parseDeploymentStyle('{"prod":"allAtOnce"}', 'prod')).toBe('allAtOnce');
  });
});

describe('everything invokes the alias', () => {
  it('every SQS event source mapping targets an alias (`<function name>:live`), never a function', () => {
    const aliases = Object.keys(api.findResources('AWS::Lambda::Alias'));
    const mappings = Object.values(api.findResources('AWS::Lambda::EventSourceMapping') as Resources);
    expect(mappings.length).toBeGreaterThanOrEqual(7);
    for (const mapping of mappings) {
      const target = JSON.stringify(mapping.Properties.FunctionName);
      expect(aliases.some((alias) => target.includes(`"Ref":"${alias}"`))).toBe(true);
      expect(target).toContain(':live');
    }
  });

  it('the API methods and the authorizer invoke the API, public and authorizer aliases, as API Gateway is allowed to', () => {
    // Arrange
    const apiAlias = aliasOf(api, functions.get('sendflow-api') ?? '').id;
    const publicAlias = aliasOf(api, functions.get('sendflow-public') ?? '').id;
    const authorizerAlias = aliasOf(api, functions.get('sendflow-authorizer') ?? '').id;
    const methods = Object.values(api.findResources('AWS::ApiGateway::Method') as Resources);

    // Assert
    for (const method of methods) {
      const uri = JSON.stringify((method.Properties.Integration as { Uri?: unknown } | undefined)?.Uri ?? '');
      const keyed = method.Properties.AuthorizationType !== 'NONE';
      if (uri !== '""') expect(uri).toContain(`"Ref":"${keyed ? apiAlias : publicAlias}"`);
    }
    expect(JSON.stringify(api.findResources('AWS::ApiGateway::Authorizer'))).toContain(`"Ref":"${authorizerAlias}"`);
    for (const alias of [apiAlias, publicAlias, authorizerAlias]) {
      api.hasResourceProperties('AWS::Lambda::Permission', {
        Principal: 'apigateway.amazonaws.com',
        FunctionName: { Ref: alias },
      });
    }
    const functionIds = new Set(functions.values());
    const permissions = Object.values(api.findResources('AWS::Lambda::Permission') as Resources).filter(
      (p) => p.Properties.Principal === 'apigateway.amazonaws.com',
    );
    for (const permission of permissions) {
      expect(functionIds.has(JSON.stringify(permission.Properties.FunctionName).split('"')[3] ?? '')).toBe(false);
    }
  });

  it('the reconciler schedule invokes the reconciler alias', () => {
    const alias = aliasOf(api, functions.get('sendflow-reconciler') ?? '').id;
    api.hasResourceProperties('AWS::Scheduler::Schedule', {
      Target: Match.objectLike({ Arn: { Ref: alias } }),
    });
  });

  it('on a stage that receives email, the inbound function deploys the same way and SES invokes its alias', () => {
    // Arrange
    const { api: inbound } = synthSendflow({ [CONTEXT_INBOUND]: { prod: { region: 'eu-west-1' } } });
    const functionId = functionsByService(inbound).get('sendflow-inbound') ?? '';
    const alias = aliasOf(inbound, functionId).id;

    // Assert
    inbound.resourceCountIs('AWS::CodeDeploy::DeploymentGroup', SERVICES.length + 1);
    inbound.hasResourceProperties('AWS::Lambda::Permission', {
      Principal: 'ses.amazonaws.com',
      FunctionName: { Ref: alias },
    });
    inbound.hasResourceProperties('AWS::SES::ReceiptRule', {
      Rule: Match.objectLike({
        Actions: Match.arrayWith([{ LambdaAction: Match.objectLike({ FunctionArn: { Ref: alias } }) }]),
      }),
    });
  });
});
