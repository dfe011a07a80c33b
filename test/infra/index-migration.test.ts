// Template assertions for moving an existing stage to the manifest's indexes (lib/index-migration.ts,
// docs/runbook.md ("Upgrading a stage across an index change")): every step, and the step after it, differ by at most one GSI created or deleted per
// table, which is all DynamoDB and CloudFormation allow in one update; no index changes definition in place.
import { describe, expect, it } from 'vitest';
import { type TableName, tableNames } from '../../lambdas/manifest';
import { beforeOutboxProjection, CONTEXT_INDEX_MIGRATION, migrationSteps } from '../../lib/index-migration';
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
  const numbers = [0, 1, 2, 3, 4, 5] as const;
  const all = numbers.map((step) => gsis({ [CONTEXT_INDEX_MIGRATION]: String(step) }));
  // From before issue 9: steps 0 to 4, then the manifest. Step 5 is the other way in (below).
  const steps = all.slice(0, 5);

  it('deploys each step with the indexes it lists, the retired ones projected ALL as they were', () => {
    numbers.forEach((step, i) => {
      for (const [table, names] of Object.entries(migrationSteps[step]) as [TableName, string[]][]) {
        expect(all[i]?.[table].map((gsi) => gsi.IndexName)).toEqual(names);
      }
      const retired = all[i]?.deliveries.find((gsi) => gsi.IndexName === 'byStatus');
      if (retired) expect(retired.Projection).toEqual({ ProjectionType: 'ALL' });
      for (const gsi of Object.values(all[i] ?? {})
        .flat()
        .filter((index) => index.IndexName === 'byOutbox')) {
        expect(gsi.Projection).toEqual({ ProjectionType: 'ALL' });
      }
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
    for (const step of [...all, final]) {
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

  it('moves a stage of the release before issue 16 to byOutboxEvents in two deploys (step 5, then the manifest)', () => {
    const five = all[5] as Record<TableName, Gsi[]>;
    const names = (layout: Record<TableName, Gsi[]>, table: TableName) => layout[table].map((gsi) => gsi.IndexName);
    const changes = (from: readonly string[], to: readonly string[]) =>
      from.filter((n) => !to.includes(n)).length + to.filter((n) => !from.includes(n)).length;
    for (const table of tableNames) {
      const before: readonly string[] =
        (beforeOutboxProjection as Partial<Record<TableName, readonly string[]>>)[table] ?? names(final, table);
      expect(changes(before, names(five, table)), `${table}, step 5`).toBeLessThanOrEqual(1);
      expect(changes(names(five, table), names(final, table)), `${table}, manifest`).toBeLessThanOrEqual(1);
    }
    // Every new index exists at step 5, where the api stack moves to the code that reads it.
    for (const table of ['emails', 'domains', 'contacts', 'suppressions'] as const) {
      expect(names(five, table)).toContain('byOutboxEvents');
    }
  });

  it('refuses an unknown step with a clear message', () => {
    expect(() => synthSendflow({ [CONTEXT_INDEX_MIGRATION]: '6' })).toThrow(
      /sendflow:indexMigration must be one of 0, 1, 2, 3, 4, 5, got 6/,
    );
  });
});
