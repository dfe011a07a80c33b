// The recovery stack of a stage with `sendflow:recovery` (lib/recovery-settings.ts), deployed to the recovery region:
// the backup vault the data stack's backup plan copies every retained table's backups into, and the replica of the
// email bodies bucket. Both outlive the stack (retained) and the stage's own region.
//
// Their names are fixed (the stage's, and the account's and region's for the bucket), because the data stack, in
// another region, must name them without a cross-region reference. So the stack is termination-protected: deleting
// it leaves them behind, and a new one would collide with them (import them instead, docs/runbook.md).
import { Duration, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { BackupVault } from 'aws-cdk-lib/aws-backup';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { bodiesLifecycleRules } from './data-stack';
import { type RecoverySettings, recoveryStackName, replicaBucketName } from './recovery-settings';

export interface SendflowRecoveryStackProps extends StackProps {
  readonly stage: string;
  readonly recovery: RecoverySettings;
  /** Days emails are kept (`sendflow:emailRetentionDays`): the replica expires objects as the source does. */
  readonly emailRetentionDays: number;
}

export class SendflowRecoveryStack extends Stack {
  readonly vault: BackupVault;
  readonly bodiesReplica: Bucket | undefined;

  constructor(scope: Construct, id: string, props: SendflowRecoveryStackProps) {
    super(scope, id, { ...props, env: { region: props.recovery.region }, terminationProtection: true });
    // The vault's default key is AWS Backup's own (aws/backup) of this region; copies are re-encrypted with it.
    this.vault = new BackupVault(this, 'CopyVault', {
      backupVaultName: recoveryStackName(props.stage),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    if (props.recovery.buckets) {
      // Lifecycle expirations are not replicated: the replica expires its objects by the same rules, and its
      // noncurrent versions (replicated deletes and overwrites) after the same days as the source's.
      this.bodiesReplica = new Bucket(this, 'BodiesReplica', {
        bucketName: replicaBucketName(props.stage, props.recovery.region),
        versioned: true,
        encryption: BucketEncryption.S3_MANAGED,
        enforceSSL: true,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
        removalPolicy: RemovalPolicy.RETAIN,
        lifecycleRules: bodiesLifecycleRules(
          props.emailRetentionDays,
          Duration.days(props.recovery.noncurrentVersionDays),
        ),
      });
      Validations.of(this.bodiesReplica).acknowledge({
        id: 'AwsSolutions-S1',
        reason:
          'A replica written only by S3 replication and read only in a disaster recovery: server access logs would ' +
          'write a log object per replicated body; CloudTrail data events can record access when an audit needs it.',
      });
    }
  }
}
