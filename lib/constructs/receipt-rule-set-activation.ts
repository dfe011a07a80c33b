// Makes an SES receipt rule set the active one, which CloudFormation cannot: an AwsCustomResource calling
// SetActiveReceiptRuleSet on create, nothing on update (an operator's later switch stands), and with no name on
// delete (none active: SES refuses to delete the active set). SES keeps ONE active set per account and region,
// so activating replaces any other; the delete call does not check which is active (docs/runbook.md).
import { Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { CfnReceiptRule } from 'aws-cdk-lib/aws-ses';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

export interface ReceiptRuleSetActivationProps {
  readonly ruleSetName: string;
  /** Activated once this rule exists (and, on removal, deactivated before it goes). */
  readonly rule: CfnReceiptRule;
  readonly logRetention: RetentionDays;
}

export class ReceiptRuleSetActivation extends Construct {
  constructor(scope: Construct, id: string, props: ReceiptRuleSetActivationProps) {
    super(scope, id);
    // Our own role, without the managed basic-execution policy: its log group and the one SES action.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Execution role of the Sendflow inbound rule set activation (SetActiveReceiptRuleSet only)',
    });
    const logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    logGroup.grantWrite(role);
    const call = (parameters?: Record<string, string>) => ({
      service: 'SES',
      action: 'SetActiveReceiptRuleSet',
      ...(parameters ? { parameters } : {}),
      physicalResourceId: PhysicalResourceId.of(props.ruleSetName),
    });
    const activation = new AwsCustomResource(this, 'Resource', {
      onCreate: call({ RuleSetName: props.ruleSetName }),
      // No onUpdate: the name is the stack's, so it never changes within a stack, and an update (a CDK upgrade
      // changing this call's shape) must not take the active set back from one an operator switched to.
      // The Update keeps the physical id, so it is no replacement and runs no delete either.
      onDelete: call(),
      policy: AwsCustomResourcePolicy.fromStatements([
        new PolicyStatement({ actions: ['ses:SetActiveReceiptRuleSet'], resources: ['*'] }),
      ]),
      role,
      logGroup,
      // The SDK in the Lambda runtime: no package download at deploy time.
      installLatestAwsSdk: false,
    });
    activation.node.addDependency(props.rule);
    Validations.of(activation).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'ses:SetActiveReceiptRuleSet supports no resource-level permissions (it names a rule set by its name); the ' +
        'role may call that one action and write its own log group, nothing else.',
    });
  }
}
