// Recoverable from the loss of a table, a bucket or a region (issue 29, item 6): with `sendflow:recovery` for a stage,
// an AWS Backup plan backs up every retained table and copies each backup to a vault in another region, the
// link-signing secret has a replica there, and the email bodies bucket is versioned and replicated there; the copies
// live in the stage's recovery stack, deployed to that region first. Without it, nothing of this is synthesized.
import { App, Validations } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { Template as Templates } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { tableNames, tables } from '../../lambdas/manifest';
import { buildSendflow, CONTEXT_EMAIL_RETENTION_DAYS, CONTEXT_RECOVERY, CONTEXT_STAGE } from '../../lib/app';
import { STAGE_TAG } from '../../lib/outputs';
import { synthSendflow, TEST_CONTEXT } from './synth';

type Resource = { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string };
type Resources = Record<string, Resource>;

const REGION = 'eu-central-1';
const ON = { [CONTEXT_RECOVERY]: { prod: { region: REGION } } };

const ofType = (template: Template, type: string) =>
  Object.entries(template.toJSON().Resources as Resources).filter(([, r]) => r.Type === type);
const onlyOf = (template: Template, type: string): [string, Resource] => {
  const found = ofType(template, type);
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  return found[0] as [string, Resource];
};
/** The retained tables' logical ids in the data stack, from the manifest. */
function retainedTableIds(synth: ReturnType<typeof synthSendflow>): string[] {
  return tableNames
    .filter((name) => tables[name].retain)
    .map((name) => synth.stacks.data.getLogicalId(synth.stacks.data.tables[name].node.defaultChild as never));
}

describe('without sendflow:recovery (the default)', () => {
  it('synthesizes no backup plan, vault, replica or recovery stack, and leaves the bucket unversioned', () => {
    const synth = synthSendflow();
    for (const type of ['AWS::Backup::BackupPlan', 'AWS::Backup::BackupVault', 'AWS::Backup::BackupSelection']) {
      expect(ofType(synth.data, type), type).toEqual([]);
    }
    const [, bucket] = onlyOf(synth.data, 'AWS::S3::Bucket');
    expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
    expect(bucket.Properties.ReplicationConfiguration).toBeUndefined();
    expect(onlyOf(synth.data, 'AWS::SecretsManager::Secret')[1].Properties.ReplicaRegions).toBeUndefined();
    expect(synth.stacks.recovery).toBeUndefined();
    // Every table still has point-in-time recovery (35 days, in its region).
    for (const [id, table] of ofType(synth.data, 'AWS::DynamoDB::GlobalTable')) {
      const replica = (table.Properties.Replicas as { PointInTimeRecoverySpecification?: unknown }[])[0];
      expect(replica?.PointInTimeRecoverySpecification, id).toEqual({ PointInTimeRecoveryEnabled: true });
    }
  });
});

describe('with sendflow:recovery', () => {
  const synth = synthSendflow(ON);
  const recovery = synth.stacks.recovery ? Templates.fromStack(synth.stacks.recovery) : undefined;

  it('backs up every retained table, and only those, on a schedule, each backup copied to the recovery region', () => {
    // Arrange
    const [, plan] = onlyOf(synth.data, 'AWS::Backup::BackupPlan');
    const [, selection] = onlyOf(synth.data, 'AWS::Backup::BackupSelection');

    // Act
    const [rule] = (plan.Properties.BackupPlan as { BackupPlanRule: Record<string, unknown>[] }).BackupPlanRule;
    const resources = (selection.Properties.BackupSelection as { Resources: { 'Fn::GetAtt': [string, string] }[] })
      .Resources;

    // Assert: daily at 03:00 UTC, kept 35 days here and there.
    expect(rule).toMatchObject({
      ScheduleExpression: 'cron(0 3 * * ? *)',
      Lifecycle: { DeleteAfterDays: 35 },
      CopyActions: [{ Lifecycle: { DeleteAfterDays: 35 } }],
    });
    const copyTo = JSON.stringify(
      ((rule?.CopyActions ?? []) as { DestinationBackupVaultArn: unknown }[])[0]?.DestinationBackupVaultArn,
    );
    expect(copyTo).toContain(`:backup:${REGION}:`);
    expect(copyTo).toContain('backup-vault:Sendflow-prod-Recovery');
    expect(resources.map((r) => r['Fn::GetAtt'][0]).sort()).toEqual(retainedTableIds(synth).sort());
    expect(resources.every((r) => r['Fn::GetAtt'][1] === 'Arn')).toBe(true);
  });

  it('keeps the local vault when the stack goes, under a name no later data stack of the stage can collide with', () => {
    const [, vault] = onlyOf(synth.data, 'AWS::Backup::BackupVault');
    expect(vault.DeletionPolicy).toBe('Retain');
    const name = JSON.stringify(vault.Properties.BackupVaultName);
    expect(name).toContain('Sendflow-prod-Data');
    expect(name).toContain('AWS::StackId');
    // Nothing else retained in the data stack has a fixed name either (test/infra/stages.test.ts's rule).
    for (const [id, resource] of Object.entries(synth.data.toJSON().Resources as Resources)) {
      if (!resource.DeletionPolicy?.startsWith('Retain')) continue;
      const fixed = Object.entries(resource.Properties ?? {}).filter(
        ([k, v]) => /Name$/.test(k) && typeof v === 'string',
      );
      expect({ id, fixed }).toEqual({ id, fixed: [] });
    }
  });

  it("outputs the vault and the role a restore job is given (AWS Backup's, for backups and restores)", () => {
    const outputs = synth.data.findOutputs('*');
    const roleId = (outputs.BackupRoleArn?.Value as { 'Fn::GetAtt': [string] } | undefined)?.['Fn::GetAtt'][0] ?? '';
    const role = (synth.data.toJSON().Resources as Resources)[roleId];
    expect(role?.Type).toBe('AWS::IAM::Role');
    expect(outputs.BackupVaultName?.Value).toBeDefined();
    expect(JSON.stringify(role?.Properties.AssumeRolePolicyDocument)).toContain('backup.amazonaws.com');
  });

  it('replicates the link-signing secret to the recovery region', () => {
    expect(onlyOf(synth.data, 'AWS::SecretsManager::Secret')[1].Properties.ReplicaRegions).toEqual([
      { Region: REGION },
    ]);
  });

  it('versions the bodies bucket (old versions kept 7 days) and replicates every object and delete to the replica', () => {
    // Arrange
    const [, bucket] = onlyOf(synth.data, 'AWS::S3::Bucket');
    const replication = bucket.Properties.ReplicationConfiguration as {
      Role: unknown;
      Rules: { Destination: { Bucket: unknown }; DeleteMarkerReplication: unknown; Status: string }[];
    };

    // Assert
    expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(replication.Rules).toHaveLength(1);
    expect(replication.Rules[0]).toMatchObject({ Status: 'Enabled', DeleteMarkerReplication: { Status: 'Enabled' } });
    const destination = JSON.stringify(replication.Rules[0]?.Destination.Bucket);
    expect(destination).toContain('sf-prod-bodies-');
    expect(destination).toContain(`-${REGION}`);
    expect(replication.Role).toBeDefined();
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    expect(rules).toContainEqual(
      expect.objectContaining({ Id: 'old-versions', NoncurrentVersionExpiration: { NoncurrentDays: 7 } }),
    );
  });

  it('puts the copies in a recovery stack of the recovery region, deployed before the data stack, kept on delete', () => {
    // Arrange
    const stack = synth.stacks.recovery;
    if (!stack || !recovery) throw new Error('no recovery stack');

    // Act
    const [, vault] = onlyOf(recovery, 'AWS::Backup::BackupVault');
    const [, replica] = onlyOf(recovery, 'AWS::S3::Bucket');
    const [, source] = onlyOf(synth.data, 'AWS::S3::Bucket');

    // Assert
    expect(stack.stackName).toBe('Sendflow-prod-Recovery');
    expect(stack.region).toBe(REGION);
    expect(stack.terminationProtection).toBe(true);
    expect(synth.stacks.data.dependencies).toContain(stack);
    expect(stack.tags.tagValues()).toEqual(expect.objectContaining({ [STAGE_TAG]: 'prod' }));
    expect(vault).toMatchObject({
      DeletionPolicy: 'Retain',
      Properties: { BackupVaultName: 'Sendflow-prod-Recovery' },
    });
    expect(replica.DeletionPolicy).toBe('Retain');
    expect(replica.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(JSON.stringify(replica.Properties.BucketName)).toContain('sf-prod-bodies-');
    // S3 replication does not replicate lifecycle expirations: the replica expires objects by the same rules.
    expect(replica.Properties.LifecycleConfiguration).toEqual(source.Properties.LifecycleConfiguration);
  });

  it('follows the stage: retention, backup interval and version days, and buckets can be left out', () => {
    // Arrange
    const tuned = synthSendflow({
      [CONTEXT_EMAIL_RETENTION_DAYS]: 90,
      [CONTEXT_RECOVERY]: JSON.stringify({
        prod: { region: 'us-west-2', backupEveryHours: 4, backupRetentionDays: 14, noncurrentVersionDays: 3 },
      }),
    });
    const noBuckets = synthSendflow({ [CONTEXT_RECOVERY]: { prod: { region: REGION, buckets: false } } });

    // Act
    const [, plan] = onlyOf(tuned.data, 'AWS::Backup::BackupPlan');
    const [rule] = (plan.Properties.BackupPlan as { BackupPlanRule: Record<string, unknown>[] }).BackupPlanRule;

    // Assert
    expect(rule).toMatchObject({ ScheduleExpression: 'cron(0 */4 * * ? *)', Lifecycle: { DeleteAfterDays: 14 } });
    const tunedReplica = onlyOf(Templates.fromStack(tuned.stacks.recovery as never), 'AWS::S3::Bucket')[1];
    const replicaRules = (tunedReplica.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    expect(replicaRules).toContainEqual(
      expect.objectContaining({ Id: 'email-retention-by-prefix', ExpirationInDays: 90 }),
    );
    expect(replicaRules).toContainEqual(
      expect.objectContaining({ Id: 'old-versions', NoncurrentVersionExpiration: { NoncurrentDays: 3 } }),
    );
    // Tables still backed up and copied; the bucket as without recovery, and no replica.
    expect(ofType(noBuckets.data, 'AWS::Backup::BackupPlan')).toHaveLength(1);
    const [, bucket] = onlyOf(noBuckets.data, 'AWS::S3::Bucket');
    expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
    expect(bucket.Properties.ReplicationConfiguration).toBeUndefined();
    expect(ofType(Templates.fromStack(noBuckets.stacks.recovery as never), 'AWS::S3::Bucket')).toEqual([]);
  });

  it('applies to the stage named only', () => {
    const staging = synthSendflow({ ...ON, [CONTEXT_STAGE]: 'staging' });
    expect(staging.stacks.recovery).toBeUndefined();
    expect(ofType(staging.data, 'AWS::Backup::BackupPlan')).toEqual([]);
  });

  it('passes cdk-nag AwsSolutions, every acknowledgement with a reason', () => {
    const app = new App({ context: { ...TEST_CONTEXT, ...ON }, builtinCloudFormationValidation: false });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    buildSendflow(app);
    expect(() => app.synth()).not.toThrow();
  });

  it.each([
    [{ prod: {} }, /region must be a region name/],
    [{ prod: { region: 'Europe' } }, /region must be a region name/],
    [{ prod: { region: REGION, backupEveryHours: 5 } }, /backupEveryHours must be one of 1, 2, 3, 4, 6, 8, 12, 24/],
    [{ prod: { region: REGION, backupRetentionDays: 3 } }, /backupRetentionDays must be a whole number from 7/],
    [{ prod: { region: REGION, noncurrentVersionDays: 0 } }, /noncurrentVersionDays/],
    [{ prod: { region: REGION, buckets: 'yes' } }, /buckets must be true or false/],
    [{ prod: { region: REGION, vault: 'x' } }, /unknown setting vault/],
    [{ prod: 'eu-central-1' }, /must be an object/],
  ])('refuses %j, naming sendflow:recovery', (value, reason) => {
    expect(() => synthSendflow({ [CONTEXT_RECOVERY]: value })).toThrow(/sendflow:recovery/);
    expect(() => synthSendflow({ [CONTEXT_RECOVERY]: value })).toThrow(reason);
  });
});
