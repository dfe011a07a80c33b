// Moving an existing stage's tables to the manifest's indexes, one GSI change per table per deploy.
// DynamoDB creates or deletes at most one GSI per table update, and CloudFormation refuses a template that asks
// for more ("Cannot perform more than one GSI creation or deletion in a single update"); a new projection needs
// an index of a new name. `-c sendflow:indexMigration=N` deploys step N; without it the data stack has the
// manifest's indexes (a new stage, or the last step). docs/runbook.md ("Upgrading a stage across an index change") has the procedure.
import type { Construct } from 'constructs';
import type { IndexSpec, TableName, TableSpec } from '../lambdas/manifest';

export const CONTEXT_INDEX_MIGRATION = 'sendflow:indexMigration';

/** The old outbox index, projected ALL: replaced by the manifest's byOutboxEvents (INCLUDE `outbox`, issue 16). */
const oldOutbox: IndexSpec = { name: 'byOutbox', partitionKey: 'outboxShard', sortKey: 'outboxDue' };

/** The indexes the manifest replaced, as they were deployed (all projected ALL). */
export const retiredIndexes: Partial<Record<TableName, readonly IndexSpec[]>> = {
  deliveries: [
    { name: 'byStatus', partitionKey: 'statusKey', sortKey: 'id' },
    { name: 'byDue', partitionKey: 'dueShard', sortKey: 'dueAt' },
  ],
  emails: [{ name: 'byScheduled', partitionKey: 'scheduleShard', sortKey: 'sendAt' }, oldOutbox],
  domains: [oldOutbox],
  contacts: [oldOutbox],
  suppressions: [oldOutbox],
};

/**
 * Each step's indexes by name, for the tables that change. Two ways in, each one GSI change per table per deploy:
 *
 * - From before issue 9 (step 0, the layout then, as deployed: what `cdk import` of such a stage must describe,
 *   since an import does not compare indexes): 1 to 3 add every new index while the old code still reads the old
 *   ones; the api stack moves to the new code at 3; 4 and the manifest drop the old ones.
 * - From the release before issue 16 (issue 9's indexes and byTenant, with the ALL-projected byOutbox): 5 adds
 *   byOutboxEvents to the four outbox tables; the api stack moves to the new code at 5; the manifest drops byOutbox.
 */
export const migrationSteps = {
  0: {
    deliveries: ['byStatus', 'byDue'],
    emails: ['byScheduled', 'byOutbox'],
    domains: ['byPending', 'byOutbox'],
    contacts: ['byOutbox'],
    suppressions: ['byOutbox'],
  },
  1: {
    deliveries: ['byStatus', 'byDue', 'byStatusKey'],
    emails: ['byScheduled', 'byScheduleShard', 'byOutbox'],
    domains: ['byPending', 'byOutbox', 'byOutboxEvents'],
    contacts: ['byOutbox', 'byOutboxEvents'],
    suppressions: ['byOutbox', 'byOutboxEvents'],
  },
  2: {
    deliveries: ['byStatus', 'byDue', 'byStatusKey', 'byDueShard'],
    emails: ['byScheduled', 'byScheduleShard', 'byOutbox', 'byTenant'],
    domains: ['byPending', 'byOutbox', 'byOutboxEvents'],
    contacts: ['byOutbox', 'byOutboxEvents'],
    suppressions: ['byOutbox', 'byOutboxEvents'],
  },
  3: {
    deliveries: ['byStatus', 'byDue', 'byStatusKey', 'byDueShard'],
    emails: ['byScheduled', 'byScheduleShard', 'byOutbox', 'byTenant', 'byOutboxEvents'],
    domains: ['byPending', 'byOutbox', 'byOutboxEvents'],
    contacts: ['byOutbox', 'byOutboxEvents'],
    suppressions: ['byOutbox', 'byOutboxEvents'],
  },
  4: {
    deliveries: ['byDue', 'byStatusKey', 'byDueShard'],
    emails: ['byScheduleShard', 'byOutbox', 'byTenant', 'byOutboxEvents'],
    domains: ['byPending', 'byOutboxEvents'],
    contacts: ['byOutboxEvents'],
    suppressions: ['byOutboxEvents'],
  },
  5: {
    emails: ['byScheduleShard', 'byOutbox', 'byTenant', 'byOutboxEvents'],
    domains: ['byPending', 'byOutbox', 'byOutboxEvents'],
    contacts: ['byOutbox', 'byOutboxEvents'],
    suppressions: ['byOutbox', 'byOutboxEvents'],
  },
} as const satisfies Record<number, Partial<Record<TableName, readonly string[]>>>;

/** The layout of the release before issue 16, from which step 5 starts (not a step: what such a stage has). */
export const beforeOutboxProjection = {
  emails: ['byScheduleShard', 'byOutbox', 'byTenant'],
  domains: ['byPending', 'byOutbox'],
  contacts: ['byOutbox'],
  suppressions: ['byOutbox'],
} as const satisfies Partial<Record<TableName, readonly string[]>>;

export type MigrationStep = keyof typeof migrationSteps;

/** The step asked for in CDK context, or null (the manifest's indexes). */
export function migrationStepOf(scope: Construct): MigrationStep | null {
  const raw: unknown = scope.node.tryGetContext(CONTEXT_INDEX_MIGRATION);
  if (raw === undefined || raw === '') return null;
  const step = Number(raw);
  if (!(step in migrationSteps)) {
    throw new Error(
      `Context ${CONTEXT_INDEX_MIGRATION} must be one of ${Object.keys(migrationSteps).join(', ')}, got ${String(raw)}`,
    );
  }
  return step as MigrationStep;
}

/** The indexes a table is deployed with: the manifest's, or those of a migration step. */
export function deployedIndexes(scope: Construct, table: TableName, spec: TableSpec): readonly IndexSpec[] {
  const step = migrationStepOf(scope);
  const steps: Partial<Record<TableName, readonly string[]>> | undefined =
    step === null ? undefined : migrationSteps[step];
  const names = steps?.[table];
  if (!names) return spec.indexes ?? [];
  const known = [...(spec.indexes ?? []), ...(retiredIndexes[table] ?? [])];
  return names.map((name) => {
    const index = known.find((candidate) => candidate.name === name);
    if (!index) throw new Error(`Index migration step ${step}: table ${table} has no index ${name}`);
    return index;
  });
}
