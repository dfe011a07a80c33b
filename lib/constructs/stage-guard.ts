// The data stack's guard: a custom resource (CDK Provider framework + lambdas/runtime/aws/stage-guard.ts) that,
// when it is created, fails the deploy if tables or secrets tagged with this stage exist that are not this
// stack's: data retained by an earlier data stack of the same stage, which a new stack would silently orphan
// behind empty ones. Its role may list tagged resources (tag:GetResources) and its own stack's resources
// (cloudformation:ListStackResources on this stack only), nothing else.
import { Aws, CustomResource, Duration, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { NodeFunction } from './node-function';

/** CloudFormation type of the guard; its properties are what the handler parses (StageGuardProperties there). */
export const STAGE_GUARD_TYPE = 'Custom::SendflowStageGuard';

export interface StageGuardProps {
  /** The stage tag every resource of this stage carries. */
  readonly tag: { readonly key: string; readonly value: string };
  readonly logRetention?: RetentionDays;
}

export class StageGuard extends Construct {
  readonly handler: NodeFunction;
  readonly provider: Provider;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: StageGuardProps) {
    super(scope, id);
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    this.handler = new NodeFunction(this, 'Handler', {
      entry: 'lambdas/runtime/aws/stage-guard.ts',
      description: 'Sendflow stage guard: refuses a data stack while data retained by an earlier one exists',
      serviceName: 'sendflow-stage-guard',
      environment: {},
      timeout: Duration.seconds(60),
      memorySize: 256,
      logRetention,
      // Invoked by CloudFormation at deploy time only, through the custom resource provider: no alias to move.
      liveAlias: false,
    });
    this.handler.role.addToPrincipalPolicy(new PolicyStatement({ actions: ['tag:GetResources'], resources: ['*'] }));
    // Its own stack's resources: an imported leftover is this stack's own, whatever stack its tags still name.
    this.handler.role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['cloudformation:ListStackResources'], resources: [Aws.STACK_ID] }),
    );
    Validations.of(this.handler.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'tag:GetResources supports no resource-level permissions and only reads tags; the only other actions ' +
        'are ListStackResources on this very stack, its own log group and X-Ray.',
    });

    // The framework's own function gets a role without managed policies too: its log group and the invoke.
    const frameworkLogs = new LogGroup(this, 'ProviderLogs', { retention: logRetention });
    const frameworkRole = new Role(this, 'ProviderRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Execution role of the Sendflow stage guard provider (invokes the guard function)',
    });
    frameworkLogs.grantWrite(frameworkRole);
    this.provider = new Provider(this, 'Provider', {
      onEventHandler: this.handler.handler,
      frameworkOnEventRole: frameworkRole,
      logGroup: frameworkLogs,
    });
    Validations.of(frameworkRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.handler.handler.node.defaultChild as CfnFunction)}.Arn>:*]`,
      reason:
        "The Provider framework's grantInvoke covers the guard function's versions and aliases (function ARN + " +
        "':*'); the role may invoke that one function and nothing else.",
    });
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: this.provider.serviceToken,
      resourceType: STAGE_GUARD_TYPE,
      properties: {
        TagKey: props.tag.key,
        Stage: props.tag.value,
        StackId: Aws.STACK_ID,
      },
    });
  }
}
