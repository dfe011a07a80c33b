// Unit tests for the data-stack guard (lambdas/runtime/aws/stage-guard.ts and adapters/aws/stage-resources.ts):
// the exact GetResources and ListStackResources requests it pages through (aws-sdk-client-mock), what counts as
// data retained by an earlier stack (tagged with the stage, not in this stack, not tagged with its id), and the
// refusal text CloudFormation shows. Update and Delete never look.
import { CloudFormationClient, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import {
  GetResourcesCommand,
  ResourceGroupsTaggingAPIClient,
  type ResourceTagMapping,
} from '@aws-sdk/client-resource-groups-tagging-api';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  DATA_RESOURCE_TYPES,
  listStackPhysicalIds,
  listTaggedDataResources,
} from '../../lambdas/adapters/aws/stage-resources';
import {
  createStageGuardHandler,
  handler,
  STACK_ID_TAG,
  StrandedDataError,
} from '../../lambdas/runtime/aws/stage-guard';

const tagging = mockClient(ResourceGroupsTaggingAPIClient);
const cloudFormation = mockClient(CloudFormationClient);
const client = new ResourceGroupsTaggingAPIClient({ region: 'eu-west-1' });
const clients = { tagging: client, cloudFormation: new CloudFormationClient({ region: 'eu-west-1' }) };

const STACK = 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Sendflow-prod-Data/new-0000';
const OLD_STACK = 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Sendflow-prod-Data/old-1111';
const table = (name: string) => `arn:aws:dynamodb:eu-west-1:123456789012:table/${name}`;
const secret = (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`;

function mapping(arn: string, stackId?: string): ResourceTagMapping {
  return {
    ResourceARN: arn,
    Tags: [{ Key: 'sendflow:stage', Value: 'prod' }, ...(stackId ? [{ Key: STACK_ID_TAG, Value: stackId }] : [])],
  };
}

/** ListStackResources answers: this stack holds these physical ids (table names, secret ARNs). */
function stackHolds(...physicalIds: string[]) {
  cloudFormation.on(ListStackResourcesCommand).resolves({
    StackResourceSummaries: physicalIds.map((id, i) => ({
      LogicalResourceId: `Resource${i}`,
      PhysicalResourceId: id,
      ResourceType: id.startsWith('arn:') ? 'AWS::SecretsManager::Secret' : 'AWS::DynamoDB::GlobalTable',
      ResourceStatus: 'CREATE_COMPLETE',
      LastUpdatedTimestamp: new Date(),
    })),
  });
}

function customResourceEvent(requestType: 'Create' | 'Update' | 'Delete') {
  return {
    RequestType: requestType,
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:framework',
    ResponseURL: 'https://cloudformation-custom-resource-response.example/',
    StackId: STACK,
    RequestId: 'req-1',
    LogicalResourceId: 'StageGuard6214B1C2',
    ResourceType: 'Custom::SendflowStageGuard',
    ...(requestType === 'Create' ? {} : { PhysicalResourceId: 'guard-1' }),
    ResourceProperties: {
      ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:framework',
      TagKey: 'sendflow:stage',
      Stage: 'prod',
      StackId: STACK,
    },
  };
}

const guard = createStageGuardHandler(clients);

beforeEach(() => {
  tagging.reset();
  cloudFormation.reset();
  stackHolds();
});

describe('listTaggedDataResources', () => {
  it('asks for tables and secrets tagged with the stage, following every page', async () => {
    // Arrange
    tagging
      .on(GetResourcesCommand)
      .resolvesOnce({ ResourceTagMappingList: [mapping(table('a'))], PaginationToken: 'page-2' })
      .resolvesOnce({ ResourceTagMappingList: [mapping(secret('s'))], PaginationToken: '' });

    // Act
    const found = await listTaggedDataResources(client, { key: 'sendflow:stage', value: 'prod' });

    // Assert
    expect(tagging.commandCalls(GetResourcesCommand).map((call) => call.args[0].input)).toEqual([
      {
        TagFilters: [{ Key: 'sendflow:stage', Values: ['prod'] }],
        ResourceTypeFilters: ['dynamodb:table', 'secretsmanager:secret'],
      },
      {
        TagFilters: [{ Key: 'sendflow:stage', Values: ['prod'] }],
        ResourceTypeFilters: ['dynamodb:table', 'secretsmanager:secret'],
        PaginationToken: 'page-2',
      },
    ]);
    expect(found).toEqual([
      { arn: table('a'), tags: { 'sendflow:stage': 'prod' } },
      { arn: secret('s'), tags: { 'sendflow:stage': 'prod' } },
    ]);
    expect(DATA_RESOURCE_TYPES).toEqual(['dynamodb:table', 'secretsmanager:secret']);
  });
});

describe('listStackPhysicalIds', () => {
  it("asks for the guard's own stack by id, following every page", async () => {
    // Arrange
    cloudFormation
      .on(ListStackResourcesCommand)
      .resolvesOnce({
        StackResourceSummaries: [
          {
            LogicalResourceId: 'A',
            PhysicalResourceId: 'table-a',
            ResourceType: 'AWS::DynamoDB::GlobalTable',
            ResourceStatus: 'CREATE_COMPLETE',
            LastUpdatedTimestamp: new Date(),
          },
        ],
        NextToken: 'next',
      })
      .resolvesOnce({
        StackResourceSummaries: [
          {
            LogicalResourceId: 'Guard',
            ResourceType: 'Custom::SendflowStageGuard',
            ResourceStatus: 'CREATE_IN_PROGRESS',
            LastUpdatedTimestamp: new Date(),
          },
        ],
      });

    // Act
    const ids = await listStackPhysicalIds(clients.cloudFormation, STACK);

    // Assert
    expect(cloudFormation.commandCalls(ListStackResourcesCommand).map((call) => call.args[0].input)).toEqual([
      { StackName: STACK },
      { StackName: STACK, NextToken: 'next' },
    ]);
    expect([...ids]).toEqual(['table-a']);
  });
});

describe('the stage guard on Create', () => {
  it('lets a first deploy through without asking CloudFormation when nothing is tagged with the stage', async () => {
    // Arrange
    tagging.on(GetResourcesCommand).resolves({ ResourceTagMappingList: [] });

    // Act & Assert
    await expect(guard(customResourceEvent('Create'))).resolves.toEqual({});
    expect(tagging).toHaveReceivedCommandTimes(GetResourcesCommand, 1);
    expect(cloudFormation).not.toHaveReceivedCommand(ListStackResourcesCommand);
  });

  it('counts tables and secrets in its own stack as its own, whatever stack id they are tagged with (cdk import)', async () => {
    // Arrange: a table and the secret re-adopted with `cdk import` still carry the deleted stack's id.
    const name = 'Sendflow-prod-Data-Accounts-OLD';
    tagging.on(GetResourcesCommand).resolves({
      ResourceTagMappingList: [mapping(table(name), OLD_STACK), mapping(secret('SigningSecret-OLD'), OLD_STACK)],
    });
    stackHolds(name, secret('SigningSecret-OLD'));

    // Act & Assert
    await expect(guard(customResourceEvent('Create'))).resolves.toEqual({});
    expect(cloudFormation).toHaveReceivedCommandWith(ListStackResourcesCommand, { StackName: STACK });
  });

  it('counts a resource as its own when it carries this stack id', async () => {
    tagging.on(GetResourcesCommand).resolves({ ResourceTagMappingList: [mapping(table('x'), STACK)] });
    await expect(guard(customResourceEvent('Create'))).resolves.toEqual({});
  });

  it('refuses while data retained by an earlier stack of the stage exists, naming it and the way out', async () => {
    // Arrange
    const own = 'Sendflow-prod-Data-Accounts-NEW';
    tagging.on(GetResourcesCommand).resolves({
      ResourceTagMappingList: [
        mapping(table(own), STACK),
        mapping(table('Sendflow-prod-Data-Accounts-OLD'), OLD_STACK),
        mapping(secret('SigningSecret-OLD')),
      ],
    });
    stackHolds(own);

    // Act
    const creating = guard(customResourceEvent('Create'));

    // Assert
    await expect(creating).rejects.toThrow(StrandedDataError);
    await expect(creating).rejects.toThrow(
      'Sendflow stage prod: 2 table(s) or secret(s) tagged sendflow:stage=prod were retained by an earlier data ' +
        'stack of this stage, and a new stack would orphan them behind empty ones: ' +
        `${table('Sendflow-prod-Data-Accounts-OLD')} (from ${OLD_STACK}); ${secret('SigningSecret-OLD')}. ` +
        'Re-adopt them with `cdk import`, or delete them (or remove their sendflow:stage tag), then deploy again. ' +
        'See docs/runbook.md, "Destroy and redeploy".',
    );
  });

  it('names at most eight leftovers and counts the rest, so the reason fits CloudFormation', async () => {
    // Arrange
    const leftovers = Array.from({ length: 11 }, (_, i) => mapping(table(`old-${i}`), OLD_STACK));
    tagging.on(GetResourcesCommand).resolves({ ResourceTagMappingList: leftovers });

    // Act
    const error = await guard(customResourceEvent('Create')).catch((e: unknown) => e as Error);

    // Assert
    expect(error.message).toContain('11 table(s) or secret(s)');
    expect(error.message).toContain(table('old-7'));
    expect(error.message).not.toContain(table('old-8'));
    expect(error.message).toContain('; and 3 more.');
  });
});

describe('the stage guard on Update and Delete', () => {
  it.each(['Update', 'Delete'] as const)('%s succeeds without looking', async (requestType) => {
    tagging.on(GetResourcesCommand).resolves({ ResourceTagMappingList: [mapping(table('old'), OLD_STACK)] });
    await expect(guard(customResourceEvent(requestType))).resolves.toEqual({});
    expect(tagging).not.toHaveReceivedCommand(GetResourcesCommand);
    expect(cloudFormation).not.toHaveReceivedCommand(ListStackResourcesCommand);
  });

  it('refuses an event without the properties it needs (a template and handler out of step)', async () => {
    const event = customResourceEvent('Create');
    await expect(guard({ ...event, ResourceProperties: { ServiceToken: 'x' } })).rejects.toThrow(/TagKey/);
  });

  it('the Lambda entry point is the same guard, built with its own clients', async () => {
    tagging.on(GetResourcesCommand).resolves({ ResourceTagMappingList: [mapping(table('old'), OLD_STACK)] });
    await expect(handler(customResourceEvent('Create'))).rejects.toThrow(StrandedDataError);
  });
});
