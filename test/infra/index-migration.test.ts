// Template assertions for moving an existing stage to the manifest's indexes (lib/index-migration.ts,
// docs/runbook.md ("Upgrading a stage across an index change")): every step, and the step after it, differ by at most one GSI created or deleted per
// table, which is all DynamoDB and CloudFormation allow in one update; no index changes definition in place.
import { describe, expect, it } from 'vitest';
import { type TableName, tableNames } from '../../lambdas/manifest';
import { CONTEXT_INDEX_MIGRATION, migrationSteps } from '../../lib/index-migration';
import { synthSendflow } from './synth';

type Gsi = { IndexName: string; KeySchema: unknown; Projection: unknown };

/** Every table's GSIs (by table) in the data stack synthesized with this context. */
function gsis(context: Record<string, unknown> = {}): Record<TableName, Gsi[]> {
  const { data, stacks } = synthSendflow(context);
  const resources = data.findResources('AWS::DynamoDB::GlobalTable');
  return Object.fromEntries(
    tableNames.map((name) => {
      const id = stacks.data.getLogicalId(stacks.data.tables[name].node.defaultChild as never);
      return [name, (resources[id]?.Properties.GlobalSecondaryIndexes ?? []) as Gsi[]];
    }),
  ) as Record<TableName, Gsi[]>;
}

describe('index migration', () => {
  const final = gsis();
  const steps = ([0, 1, 2, 3] as const).map((step) => gsis({ [CONTEXT_INDEX_MIGRATION]: String(step) }));

  it('deploys each step with the indexes it lists, the retired ones projected ALL as they were', () => {
    ([0, 1, 2, 3] as const).forEach((step, i) => {
      for (const [table, names] of Object.entries(migrationSteps[step]) as [TableName, string[]][]) {
        expect(steps[i]?.[table].map((gsi) => gsi.IndexName)).toEqual(names);
      }
      const retired = steps[i]?.deliveries.find((gsi) => gsi.IndexName === 'byStatus');
      if (retired) expect(retired.Projection).toEqual({ ProjectionType: 'ALL' });
    });
  });

  it('changes at most one GSI per table from each deploy to the next, and never one in place', () => {
    // Step 0 is what was deployed before (and what an import of such a stage describes).
    const sequence = [
      ...[...steps, final].map((step) =>
        Object.fromEntries(tableNames.map((t) => [t, step[t].map((gsi) => gsi.IndexName)])),
      ),
    ] as Record<TableName, string[]>[];
    const definitions = new Map<string, string>();
    for (const step of [...steps, final]) {
      for (const table of tableNames) {
        for (const gsi of step[table]) {
          const key = `${table}/${gsi.IndexName}`;
          const definition = JSON.stringify([gsi.KeySchema, gsi.Projection]);
          expect(definitions.get(key) ?? definition, key).toBe(definition);
          definitions.set(key, definition);
        }
      }
    }
    expect(sequence[0]?.deliveries).toEqual(['byStatus', 'byDue']);
    for (let i = 1; i < sequence.length; i++) {
      for (const table of tableNames) {
        const [from, to] = [new Set(sequence[i - 1]?.[table]), new Set(sequence[i]?.[table])];
        const changes = [...from].filter((n) => !to.has(n)).length + [...to].filter((n) => !from.has(n)).length;
        expect(changes, `${table}, deploy ${i}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('refuses an unknown step with a clear message', () => {
    expect(() => synthSendflow({ [CONTEXT_INDEX_MIGRATION]: '4' })).toThrow(
      /sendflow:indexMigration must be one of 0, 1, 2, 3, got 4/,
    );
  });
});
