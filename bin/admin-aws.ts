// The admin CLI's AWS target: finds the deployed api stack with CloudFormation DescribeStacks, reads the
// physical table names and usage plan ids from its outputs (lib/outputs.ts), and works on them with the
// same repositories the functions use plus the API Gateway usage plans. Credentials and region come from the
// SDK's default chain (AWS_PROFILE, AWS_REGION, …).
import { randomBytes } from 'node:crypto';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import {
  CloudFormationClient,
  CloudFormationServiceException,
  DescribeStacksCommand,
  type Stack,
} from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ApiGatewayAuthorizerCache } from '../lambdas/adapters/aws/authorizer-cache';
import { ApiGatewayUsagePlans } from '../lambdas/adapters/aws/usage-plans';
import { backfillEmailStatuses } from '../lambdas/adapters/dynamodb/email-history';
import { upgradeEmails } from '../lambdas/adapters/dynamodb/emails';
import { upgradeSuppressions } from '../lambdas/adapters/dynamodb/suppressions';
import { PLAN_NAMES, type PlanName } from '../lambdas/domain/plans';
import { STAGE, type TableName, tableEnvVar, tableNames } from '../lambdas/manifest';
import { loadConfig } from '../lambdas/runtime/config';
import { documentClient } from '../lambdas/runtime/document-client';
import { createRepositories } from '../lambdas/runtime/repositories';
import { outputNames } from '../lib/outputs';
import type { AdminSession } from './admin';

const ON_AWS_INBOUND_FAILURES =
  'On AWS, inbound messages the function gave up on are in the stack output InboundFailuresQueueUrl (alarm ' +
  'InboundFailuresDepth); docs/runbook.md, "Inbound email on AWS", lists and replays them.';

/** Raised when the stack cannot be used: not deployed, not finished, or missing outputs. */
export class StackLookupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StackLookupError';
  }
}

/** SDK clients, injectable for tests; by default built from the environment. */
export interface AwsAdminClients {
  readonly cloudFormation?: CloudFormationClient;
  readonly dynamo?: DynamoDBClient;
  readonly apiGateway?: APIGatewayClient;
}

export interface StackTargets {
  readonly tables: Readonly<Record<TableName, string>>;
  readonly usagePlanIds: Readonly<Record<PlanName, string>>;
  readonly restApiId: string;
  /** The stage URL (ends with `/v1/`): dashboard sign-in links start with it. */
  readonly apiUrl: string;
}

/** Table names and usage plan ids from the api stack's outputs; every missing output is named at once. */
export async function readStackTargets(cloudFormation: CloudFormationClient, stackName: string): Promise<StackTargets> {
  let found: Stack | undefined;
  try {
    const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
    found = Stacks?.[0];
  } catch (error) {
    // CloudFormation answers ValidationException "Stack with id X does not exist" for an unknown stack.
    if (error instanceof CloudFormationServiceException && /does not exist/i.test(error.message)) {
      throw new StackLookupError(
        `Stack ${stackName} does not exist in this account and region. Deploy it with \`npx cdk deploy --all\`, ` +
          'check AWS_REGION / AWS_PROFILE and --stage, or name the api stack with --stack.',
        { cause: error },
      );
    }
    throw error;
  }
  if (!found) throw new StackLookupError(`Stack ${stackName} does not exist in this account and region.`);
  const outputs = new Map((found.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  const wanted = [
    ...tableNames.map((table) => outputNames.tables[table]),
    ...PLAN_NAMES.map((plan) => outputNames.usagePlans[plan]),
    outputNames.restApiId,
    outputNames.apiUrl,
  ];
  const missing = wanted.filter((key) => !outputs.get(key));
  if (missing.length) {
    throw new StackLookupError(
      `Stack ${stackName} (${found.StackStatus ?? 'status unknown'}) lacks the outputs ${missing.join(', ')}. ` +
        'Is it a Sendflow api stack (Sendflow-<stage>-Api), fully deployed from this version?',
    );
  }
  const value = (key: string) => outputs.get(key) as string;
  return {
    tables: Object.fromEntries(tableNames.map((t) => [t, value(outputNames.tables[t])])) as Record<TableName, string>,
    usagePlanIds: Object.fromEntries(PLAN_NAMES.map((p) => [p, value(outputNames.usagePlans[p])])) as Record<
      PlanName,
      string
    >,
    restApiId: value(outputNames.restApiId),
    apiUrl: value(outputNames.apiUrl),
  };
}

/** `stack`: the api stack's name (AdminTarget.stack, derived from --stage or given with --stack). */
export async function awsAdminDeps(stack: string, clients: AwsAdminClients = {}): Promise<AdminSession> {
  const cloudFormation = clients.cloudFormation ?? new CloudFormationClient({});
  const dynamo = clients.dynamo ?? new DynamoDBClient({});
  const apiGateway = clients.apiGateway ?? new APIGatewayClient({});
  const close = async () => {
    cloudFormation.destroy();
    dynamo.destroy();
    apiGateway.destroy();
  };
  try {
    const { tables, usagePlanIds, restApiId, apiUrl } = await readStackTargets(cloudFormation, stack);
    const { accounts, apiKeys, sessions, reputationStore } = createRepositories(dynamo, tables);
    return {
      dashboard: { sessions, accounts, clock: { now: () => Date.now() }, random: randomBytes, baseUrl: apiUrl },
      // The stage's retention is its functions' setting (sendflow:emailRetentionDays): the operator gives the same
      // SF_EMAIL_RETENTION_DAYS to the command (docs/runbook.md, "Splitting emails into parts, and email retention").
      upgradeEmails: async () => ({
        ...(await upgradeEmails(documentClient(dynamo), tables, { retentionSeconds: emailRetentionDays() * 86_400 })),
        statuses: await backfillEmailStatuses(documentClient(dynamo), tables.emails, tables.emailEvents),
      }),
      upgradeSuppressions: () => upgradeSuppressions(documentClient(dynamo), tables.suppressions),
      // The stage's thresholds are its functions' settings (sendflow:reputation): the operator gives the same
      // SF_REPUTATION_* to `reputation` (a lift needs none of them).
      reputation: { store: reputationStore, policy: reputationPolicyFromEnv(), clock: { now: () => Date.now() } },
      // On AWS a message SES received is in the inbound bucket from the start; an event the inbound function gave
      // up on waits in the stage's failures queue, whose alarm pages (docs/runbook.md, "Inbound email on AWS").
      inboundFailures: () => Promise.reject(new Error(ON_AWS_INBOUND_FAILURES)),
      retryInboundFailure: () => Promise.reject(new Error(ON_AWS_INBOUND_FAILURES)),
      deps: {
        accounts,
        apiKeys,
        usagePlans: new ApiGatewayUsagePlans({ client: apiGateway, usagePlanIds }),
        authorizerCache: new ApiGatewayAuthorizerCache(apiGateway, restApiId, STAGE),
        clock: { now: () => Date.now() },
        random: randomBytes,
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** SF_REPUTATION_* of the operator's environment (the stage's settings), the defaults where unset. */
function reputationPolicyFromEnv() {
  const { reputation } = loadConfig(
    Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('SF_REPUTATION_'))),
    Object.fromEntries(tableNames.map((table) => [tableEnvVar(table), `unused-${table}`])),
  );
  return reputation;
}

/** SF_EMAIL_RETENTION_DAYS of the operator's environment (the stage's setting), 30 when unset. */
function emailRetentionDays(): number {
  const raw = process.env.SF_EMAIL_RETENTION_DAYS;
  const days = raw === undefined || raw.trim() === '' ? 30 : Number(raw);
  if (!Number.isInteger(days) || days < 1 || days > 3650) {
    throw new Error(`SF_EMAIL_RETENTION_DAYS must be a whole number of days from 1 to 3650, got ${raw}`);
  }
  return days;
}
