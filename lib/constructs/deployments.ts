// Safe deploys: each function of the api stack is deployed by CodeDeploy, which moves its `live` alias from the
// running version to the new one (by default a canary: 10% of invocations for 5 minutes, then all) and moves it
// back when the deployment fails, is stopped, or one of the function's alarms fires meanwhile. CloudFormation
// waits for every deployment; one that rolls back fails the stack update, and CloudFormation's own rollback
// then returns every alias and everything else to the release before. That release must read what the new one
// wrote: expand/contract (lambdas/domain/stored-formats.ts), proven by `npm run check:rollback`.
import { Stack, Validations } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import {
  type ILambdaDeploymentConfig,
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
} from 'aws-cdk-lib/aws-codedeploy';
import { Construct } from 'constructs';
import { contextObject } from '../context-object';
import type { NodeFunction } from './node-function';

/** `{"dev": "allAtOnce"}` in cdk.json: how each stage's deployments shift traffic (canary by default). */
export const CONTEXT_DEPLOYMENT = 'sendflow:deployment';

export const DEPLOYMENT_STYLES = {
  /** 10% of invocations on the new version for 5 minutes, then all: the default. */
  canary10Percent5Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  /** 10% more every minute: 10 minutes to all of it. */
  linear10PercentEvery1Minute: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
  /** At once (a developer's stage): a failed deployment still rolls back, an alarm only after it. */
  allAtOnce: LambdaDeploymentConfig.ALL_AT_ONCE,
} as const satisfies Record<string, ILambdaDeploymentConfig>;

export type DeploymentStyle = keyof typeof DEPLOYMENT_STYLES;
export const DEFAULT_DEPLOYMENT_STYLE: DeploymentStyle = 'canary10Percent5Minutes';

/** The stage's entry of `sendflow:deployment` (an object by stage, or its JSON from `-c`); the default without. */
export function parseDeploymentStyle(raw: unknown, stage: string): DeploymentStyle {
  if (raw === undefined) return DEFAULT_DEPLOYMENT_STYLE;
  const styles = contextObject(raw, CONTEXT_DEPLOYMENT, '{"dev": "allAtOnce"}');
  const problems = Object.entries(styles)
    .filter(([, style]) => typeof style !== 'string' || !Object.hasOwn(DEPLOYMENT_STYLES, style))
    .map(
      ([name, style]) => `${name}: ${JSON.stringify(style)} is not one of ${Object.keys(DEPLOYMENT_STYLES).join(', ')}`,
    );
  if (problems.length) throw new Error(`Context ${CONTEXT_DEPLOYMENT}: ${problems.join('; ')}`);
  return (styles[stage] as DeploymentStyle | undefined) ?? DEFAULT_DEPLOYMENT_STYLE;
}

export interface DeploymentsProps {
  readonly style: DeploymentStyle;
  /** Each deployed function by a short name, with the alarms its deployment rolls back on. */
  readonly functions: Readonly<Record<string, { readonly fn: NodeFunction; readonly alarms: readonly IAlarm[] }>>;
}

export class Deployments extends Construct {
  readonly application: LambdaApplication;
  readonly groups: Record<string, LambdaDeploymentGroup> = {};

  constructor(scope: Construct, id: string, props: DeploymentsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // Named after the stack (and so the stage), as the runbook's commands name them.
    this.application = new LambdaApplication(this, 'Application', { applicationName: stack.stackName });
    for (const [name, { fn, alarms }] of Object.entries(props.functions)) {
      if (!fn.alias) throw new Error(`${name} has no live alias to deploy`);
      const group = new LambdaDeploymentGroup(this, name, {
        application: this.application,
        deploymentGroupName: `${stack.stackName}-${name}`,
        alias: fn.alias,
        deploymentConfig: DEPLOYMENT_STYLES[props.style],
        alarms: [...alarms],
        autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      });
      Validations.of(group).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
        reason:
          "CodeDeploy's service role for Lambda deployments: the AWS-maintained policy that lets it shift an alias " +
          'and read alarms; the Limited variant, which may invoke only hooks named CodeDeployHook_*, and we use none.',
      });
      this.groups[name] = group;
    }
  }
}
