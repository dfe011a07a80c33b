// The stateful stack: one DynamoDB table per manifest entry, and the key that signs public links. It changes
// rarely and is deployed first.
//
// What outlives the stack (retained tables, the secret) has a generated name, so a redeploy never collides
// with it; the stage guard refuses to create the stack while such leftovers of an earlier one exist, instead
// of silently starting over with empty tables (docs/runbook.md, "Destroy and redeploy").
//
// The api stack finds the tables through SSM parameters written here, not through CloudFormation
// exports: an export that another stack imports cannot change, so a table replacement (new key schema,
// new physical name) would be blocked until the importer let go. With parameters the api stack simply
// re-resolves the name on its next deploy.
import { Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { BackupPlan, BackupPlanRule, BackupResource, BackupVault } from 'aws-cdk-lib/aws-backup';
import { AttributeType, Billing, Capacity, ProjectionType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, type LifecycleRule, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { StringParameter } from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import { EXPIRY_TAG, RETENTION_PREFIX, SHORT_LIVED } from '../lambdas/adapters/aws/s3-expiry-keys';
import { EMAIL_OBJECTS_PREFIX } from '../lambdas/adapters/email-body-object';
import { type Projection, type TableName, type TableSpec, tableNames, tables } from '../lambdas/manifest';
import { StageGuard } from './constructs/stage-guard';
import { deployedIndexes } from './index-migration';
import { STAGE_TAG } from './outputs';
import { type RecoverySettings, recoveryVaultArn, replicaBucketName } from './recovery-settings';
import { boundsOf, ON_DEMAND, type TableCapacity } from './table-capacity';

export interface SendflowDataStackProps extends StackProps {
  /** Deployment stage: the guard looks for resources tagged with it (the app tags every stack). */
  readonly stage: string;
  /**
   * Tables and the secret depend on the guard, so it runs before they exist (default). Off only to synthesize
   * for `cdk import`, whose template holds the imported resources alone: a dependency on the guard there would
   * be unresolved.
   */
  readonly guardFirst?: boolean;
  /** Days emails and everything of theirs are kept (`sendflow:emailRetentionDays`): the bodies bucket's lifecycle. */
  readonly emailRetentionDays?: number;
  /** On demand (default), or provisioned with auto scaling for the tables it names (`sendflow:capacity`). */
  readonly capacity?: TableCapacity;
  /**
   * `sendflow:recovery` for this stage: a backup plan of every retained table copied to another region, the secret
   * replicated there, the bodies bucket versioned and replicated there (the recovery stack holds the copies).
   * Point-in-time recovery only, in this region, when omitted.
   */
  readonly recovery?: RecoverySettings;
}

/** How far ahead an email may be scheduled (the API's scheduled_at bound): its body is kept that much longer. */
export const MAX_SCHEDULE_DAYS = 30;

export class SendflowDataStack extends Stack {
  readonly tables: Readonly<Record<TableName, TableV2>>;
  /** SSM parameter holding each table's physical name: plain strings, safe to hand to another stack. */
  readonly tableParameters: Readonly<Record<TableName, string>>;
  /**
   * Signs public links (one-click unsubscribe, contact confirmation). State, not configuration: links already
   * sitting in mailboxes must keep verifying, so it lives here, retained, with a generated name.
   */
  readonly signingSecret: Secret;
  /** SSM parameter holding the secret's ARN: the api stack resolves it at deploy time, as it does table names. */
  readonly signingSecretParameter: string;
  readonly guard: StageGuard;
  /** Email bodies too large to keep inline (lambdas/adapters/tiered-email-bodies.ts), under `emails/<id>/`. */
  readonly emailBodies: Bucket;
  /** SSM parameter holding the bucket's name, for the api stack. */
  readonly emailBodiesParameter: string;
  /** With `recovery`: the plan backing up every retained table, its vault here, and the copy rule to the other region. */
  readonly backupPlan: BackupPlan | undefined;

  constructor(scope: Construct, id: string, props: SendflowDataStackProps) {
    super(scope, id, props);
    // First, before any table or secret exists: a refusal then leaves nothing behind. Everything retained
    // below depends on it.
    this.guard = new StageGuard(this, 'StageGuard', { tag: { key: STAGE_TAG, value: props.stage } });
    const afterGuard = (construct: Construct) => {
      if (props.guardFirst !== false) construct.node.addDependency(this.guard.resource);
    };
    const built = {} as Record<TableName, TableV2>;
    const parameters = {} as Record<TableName, string>;
    for (const name of tableNames) {
      const table = manifestTable(this, name, tables[name], props.capacity ?? ON_DEMAND);
      afterGuard(table);
      const parameterName = `/${this.stackName}/tables/${name}`;
      new StringParameter(this, `${logicalName(name)}TableName`, {
        parameterName,
        stringValue: table.tableName,
        description: `Physical name of the Sendflow ${name} table (read by the api stack at deploy time).`,
      });
      built[name] = table;
      parameters[name] = parameterName;
    }
    this.tables = built;
    this.tableParameters = parameters;

    this.signingSecret = new Secret(this, 'SigningSecret', {
      description: 'Sendflow link-signing key (HMAC of unsubscribe and confirmation links); never rotate in place',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      // Retained, except when the deploy that created it rolls back (then nothing is left to orphan).
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      // A read-only replica in the recovery region, promoted there if this region is lost: links keep verifying.
      ...(props.recovery ? { replicaRegions: [{ region: props.recovery.region }] } : {}),
    });
    afterGuard(this.signingSecret);
    this.signingSecretParameter = `/${this.stackName}/signing-secret`;
    new StringParameter(this, 'SigningSecretArn', {
      parameterName: this.signingSecretParameter,
      stringValue: this.signingSecret.secretArn,
      description: 'ARN of the Sendflow link-signing secret (read by the api stack at deploy time).',
    });
    this.emailBodies = emailBodiesBucket(this, props.emailRetentionDays ?? 30, props.stage, props.recovery);
    afterGuard(this.emailBodies);
    this.emailBodiesParameter = `/${this.stackName}/email-bodies-bucket`;
    new StringParameter(this, 'EmailBodiesBucketName', {
      parameterName: this.emailBodiesParameter,
      stringValue: this.emailBodies.bucketName,
      description: 'Name of the Sendflow email bodies bucket (read by the api stack at deploy time).',
    });

    this.backupPlan = props.recovery && this.tableBackups(props.stage, props.recovery);

    Validations.of(this.signingSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The key verifies every one-click unsubscribe (RFC 8058) and confirmation link already delivered; ' +
        "rotating it would break those links in recipients' mailboxes. It never leaves AWS except as HMACs.",
    });
  }

  /**
   * Every retained table backed up by AWS Backup every `backupEveryHours` into a vault of this stack, each backup
   * copied into the recovery stack's vault in the recovery region; both kept `backupRetentionDays`. Short-lived
   * tables (rate limits, idempotency, sessions, the request log) are left out: a restored stage starts them empty.
   */
  private tableBackups(stage: string, recovery: RecoverySettings): BackupPlan {
    const retention = Duration.days(recovery.backupRetentionDays);
    // Retained (recovery points outlive the stack; AWS Backup refuses to delete a vault that holds any), under a
    // name unique to this stack's creation, so a data stack created again never collides with it.
    const stackUuid = Fn.select(2, Fn.split('/', Aws.STACK_ID));
    const vault = new BackupVault(this, 'BackupVault', {
      backupVaultName: Fn.join('-', [this.stackName, Fn.select(4, Fn.split('-', stackUuid))]),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const every = recovery.backupEveryHours;
    const plan = new BackupPlan(this, 'BackupPlan', {
      backupPlanName: `${this.stackName}-tables`,
      backupVault: vault,
      backupPlanRules: [
        new BackupPlanRule({
          ruleName: `every-${every}h-copied-to-${recovery.region}`,
          // UTC; a daily backup at 03:00, the quietest hour of most senders' days.
          scheduleExpression: Schedule.cron({ minute: '0', hour: every === 24 ? '3' : `*/${every}` }),
          startWindow: Duration.hours(1),
          completionWindow: Duration.hours(Math.max(2, Math.min(every, 24))),
          deleteAfter: retention,
          copyActions: [
            {
              destinationBackupVault: BackupVault.fromBackupVaultArn(
                this,
                'RecoveryVault',
                recoveryVaultArn(stage, recovery.region),
              ),
              deleteAfter: retention,
            },
          ],
        }),
      ],
    });
    const retained = tableNames.filter((name) => tables[name].retain).map((name) => this.tables[name]);
    // Its role, AWS Backup's managed policies for backups and for restores: the selection backs up exactly these
    // tables, and an operator passes the role to a restore job in either region (IAM is global).
    const role = new Role(this, 'BackupRole', {
      assumedBy: new ServicePrincipal('backup.amazonaws.com'),
      description: 'Assumed by AWS Backup to back up, copy and restore the retained Sendflow tables',
      managedPolicies: [
        ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSBackupServiceRolePolicyForBackup'),
        ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSBackupServiceRolePolicyForRestores'),
      ],
    });
    plan.addSelection('RetainedTables', {
      backupSelectionName: `${this.stackName}-retained-tables`,
      resources: retained.map((table) => BackupResource.fromArn(table.tableArn)),
      role,
    });
    Validations.of(role).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]',
        reason:
          'AWS Backup assumes this role to back up and copy the retained tables; the AWS-maintained policy follows ' +
          "the service's own needs (DynamoDB backups, cross-region copies), and only this selection's tables are backed up.",
      },
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForRestores]',
        reason:
          'The role an operator passes to a restore job (docs/runbook.md, "Disaster recovery"); the AWS-maintained ' +
          'policy covers what a DynamoDB restore creates, in whichever region the copy is restored.',
      },
    );
    // Plain outputs, for the restore procedure (docs/runbook.md, "Disaster recovery").
    new CfnOutput(this, 'BackupVaultName', {
      value: vault.backupVaultName,
      description: "This region's backup vault of the retained tables",
    }).overrideLogicalId('BackupVaultName');
    new CfnOutput(this, 'BackupRoleArn', {
      value: role.roleArn,
      description: 'Role AWS Backup assumes; pass it to a restore job (--iam-role-arn) in either region',
    }).overrideLogicalId('BackupRoleArn');
    return plan;
  }
}

/**
 * The bodies bucket: private (public access blocked, bucket-owner objects, TLS only), encrypted, retained like the
 * tables it belongs with. Its lifecycle deletes what reads already skip (each object carries its email's expiry),
 * by key (lambdas/adapters/aws/s3-expiry-keys.ts): objects under `retention/emails/` (all but a scheduled email's)
 * after the retention, those under `emails/` after the retention plus the longest schedule; unfinished multipart
 * uploads after a day.
 */
function emailBodiesBucket(
  scope: Construct,
  retentionDays: number,
  stage: string,
  recovery: RecoverySettings | undefined,
): Bucket {
  const replicated = recovery?.buckets === true;
  // Our own replication role: CDK's default one has a fixed name (CDKReplicationRole), which a second stage of the
  // account would collide with. Granted below what S3 replication needs of the two buckets.
  const replicationRole = replicated
    ? new Role(scope, 'EmailBodiesReplicationRole', {
        assumedBy: new ServicePrincipal('s3.amazonaws.com'),
        description: 'Assumed by S3 to replicate the Sendflow email bodies to the recovery region',
      })
    : undefined;
  const replica =
    recovery && replicated
      ? Bucket.fromBucketAttributes(scope, 'EmailBodiesReplica', {
          bucketName: replicaBucketName(stage, recovery.region),
          region: recovery.region,
        })
      : undefined;
  const bucket = new Bucket(scope, 'EmailBodies', {
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: bodiesLifecycleRules(
      retentionDays,
      replicated ? Duration.days(recovery.noncurrentVersionDays) : undefined,
    ),
    // With recovery: an overwritten or deleted object stays a noncurrent version for a few days (a bug or a
    // mistaken delete is undone from it), and every object, delete markers included, is replicated to the
    // recovery stack's bucket in the recovery region (a lost region is served from there).
    ...(recovery && replica && replicationRole
      ? {
          versioned: true,
          replicationRole,
          replicationRules: [
            { id: `to-${recovery.region}`, priority: 1, deleteMarkerReplication: true, destination: replica },
          ],
        }
      : {}),
  });
  if (replica && replicationRole) {
    bucket.grantReplicationPermission(replicationRole, { destinations: [{ bucket: replica }] });
    Validations.of(replicationRole).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(scope).getLogicalId(bucket.node.defaultChild as never)}.Arn>/*]`,
        reason:
          'S3 replication reads every object version of the bodies bucket (GetObjectVersionForReplication, its ACL ' +
          'and tags); object keys are email ids, known only at run time.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::sf-${stage}-bodies-<AWS::AccountId>-${recovery?.region}/*]`,
        reason:
          'S3 replication writes every object, delete marker and tag into the replica bucket of the recovery stack ' +
          '(ReplicateObject, ReplicateDelete, ReplicateTags); object keys are email ids, known only at run time.',
      },
    );
  }
  Validations.of(bucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason:
      'Server access logs would write a log object per body read or written (as many objects again, each billed ' +
      'as a PUT); the bucket is private to two function roles, whose calls CloudTrail data events can record when ' +
      'an audit needs them.',
  });
  return bucket;
}

/**
 * The bodies bucket's lifecycle (and its replica's, which S3 replication does not expire): by key prefix, see
 * emailBodiesBucket. `noncurrentVersions`: on a versioned bucket, how long an overwritten or deleted object's old
 * version is kept; the delete markers left when the last version goes are removed too.
 */
export function bodiesLifecycleRules(retentionDays: number, noncurrentVersions?: Duration): LifecycleRule[] {
  return [
    {
      id: 'email-retention-by-prefix',
      prefix: `${RETENTION_PREFIX}${EMAIL_OBJECTS_PREFIX}`,
      expiration: Duration.days(retentionDays),
    },
    // Objects put before the prefix carried a tag instead (billed monthly): this rule still deletes those after
    // the retention. Nothing tags any more, so it can go one retention period after the prefix's deploy.
    {
      id: 'email-retention',
      prefix: EMAIL_OBJECTS_PREFIX,
      tagFilters: { 'sendflow-expiry': 'retention' },
      expiration: Duration.days(retentionDays),
    },
    {
      id: 'scheduled-email-retention',
      prefix: EMAIL_OBJECTS_PREFIX,
      expiration: Duration.days(retentionDays + MAX_SCHEDULE_DAYS),
    },
    // Test-mode emails' attachments are kept a day (reads skip them after): tagged at their PUT, so S3 deletes
    // them after a day rather than the retention. A tag is billed monthly, but lives a day here.
    {
      id: 'short-lived-files',
      prefix: `${RETENTION_PREFIX}${EMAIL_OBJECTS_PREFIX}`,
      tagFilters: { [EXPIRY_TAG]: SHORT_LIVED },
      expiration: Duration.days(1),
    },
    { id: 'unfinished-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
    ...(noncurrentVersions
      ? [{ id: 'old-versions', noncurrentVersionExpiration: noncurrentVersions, expiredObjectDeleteMarker: true }]
      : []),
  ];
}

function manifestTable(scope: Construct, name: TableName, spec: TableSpec, capacity: TableCapacity): TableV2 {
  return new TableV2(scope, logicalName(name), {
    partitionKey: { name: spec.partitionKey, type: AttributeType.STRING },
    ...(spec.sortKey ? { sortKey: { name: spec.sortKey, type: AttributeType.STRING } } : {}),
    billing: billingOf(capacity, name),
    encryption: TableEncryptionV2.awsManagedKey(),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    ...(spec.ttlAttribute ? { timeToLiveAttribute: spec.ttlAttribute } : {}),
    globalSecondaryIndexes: deployedIndexes(scope, name, spec).map((index) => ({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
      ...(index.sortKey ? { sortKey: { name: index.sortKey, type: AttributeType.STRING } } : {}),
      ...projectionOf(index.projection),
    })),
    // Retained tables hold customer data: they survive stack deletion and refuse an accidental DeleteTable.
    // Plain Retain, not RetainExceptOnCreate: deletion protection would fail that rollback's delete anyway;
    // a table a failed first deploy leaves behind is tagged, and the guard names it on the next attempt.
    removalPolicy: spec.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    deletionProtection: spec.retain,
  });
}

/**
 * On demand, or provisioned with target-tracking auto scaling. The GSIs take the table's read and write settings
 * (TableV2 copies them to each index unless an index sets its own): a GSI with less write capacity than its table
 * throttles the table's writes, so AWS advises the same settings for both.
 */
function billingOf(capacity: TableCapacity, table: TableName): Billing {
  const bounds = boundsOf(capacity, table);
  if (!bounds || capacity.mode !== 'provisioned') return Billing.onDemand();
  const targetUtilizationPercent = capacity.targetUtilization;
  return Billing.provisioned({
    readCapacity: Capacity.autoscaled({
      minCapacity: bounds.minRead,
      maxCapacity: bounds.maxRead,
      targetUtilizationPercent,
    }),
    writeCapacity: Capacity.autoscaled({
      minCapacity: bounds.minWrite,
      maxCapacity: bounds.maxWrite,
      targetUtilizationPercent,
    }),
  });
}

/** The manifest's projection as TableV2 takes it (ALL when the manifest names none). */
function projectionOf(projection: Projection = { type: 'ALL' }) {
  if (projection.type === 'INCLUDE') {
    return { projectionType: ProjectionType.INCLUDE, nonKeyAttributes: [...projection.attributes] };
  }
  return { projectionType: projection.type === 'KEYS_ONLY' ? ProjectionType.KEYS_ONLY : ProjectionType.ALL };
}

function logicalName(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}
