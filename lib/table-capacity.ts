// DynamoDB capacity mode per stage, from CDK context (`sendflow:capacity`): on demand by default, or provisioned with
// auto scaling for the tables a stage names (each GSI scales with its table's bounds), for stages whose load is
// steady enough that paying for capacity by the hour beats paying per request (docs/runbook.md, "DynamoDB capacity: on demand or provisioned").

import * as z from 'zod';
import { type TableName, tableNames } from '../lambdas/manifest';
import { contextObject } from './context-object';

export const CONTEXT_CAPACITY = 'sendflow:capacity';
/** Auto scaling keeps consumption near this share of what is provisioned (DynamoDB's console default). */
export const DEFAULT_TARGET_UTILIZATION = 70;

/** One provisioned table's auto scaling bounds, in capacity units; its GSIs get the same. */
export interface TableBounds {
  readonly minRead: number;
  readonly maxRead: number;
  readonly minWrite: number;
  readonly maxWrite: number;
}

export type TableCapacity =
  | { readonly mode: 'on-demand' }
  | {
      readonly mode: 'provisioned';
      /** Percent (20–90) of provisioned capacity auto scaling aims to use. */
      readonly targetUtilization: number;
      /** The tables switched to provisioned; every other table stays on demand. */
      readonly tables: Readonly<Partial<Record<TableName, TableBounds>>>;
    };

export const ON_DEMAND: TableCapacity = { mode: 'on-demand' };

const units = z.int().min(1);
const bounds = z
  .strictObject({ minRead: units, maxRead: units, minWrite: units, maxWrite: units })
  .refine((b) => b.minRead <= b.maxRead, { message: 'minRead is above maxRead', path: ['minRead'] })
  .refine((b) => b.minWrite <= b.maxWrite, { message: 'minWrite is above maxWrite', path: ['minWrite'] });

const stageCapacity = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('on-demand') }),
  z.strictObject({
    mode: z.literal('provisioned'),
    // Application Auto Scaling's target tracking for DynamoDB takes 20 to 90 percent.
    targetUtilization: z.int().min(20).max(90).default(DEFAULT_TARGET_UTILIZATION),
    tables: z
      .partialRecord(z.enum(tableNames as [TableName, ...TableName[]]), bounds)
      .refine((t) => Object.keys(t).length > 0, { message: 'name at least one table to provision' }),
  }),
]);

const EXAMPLE =
  '{"prod": {"mode": "provisioned", "targetUtilization": 70, "tables": ' +
  '{"deliveries": {"minRead": 50, "maxRead": 20000, "minWrite": 500, "maxWrite": 40000}}}}';

/**
 * The stage's entry of `sendflow:capacity` (`{"<stage>": {...}}`, an object in cdk.json or its JSON from `-c`);
 * on demand when the setting or the stage's entry is absent. Every stage's entry is checked, so a typo in any
 * fails synth with every problem listed.
 */
export function parseTableCapacity(raw: unknown, stage: string, key = CONTEXT_CAPACITY): TableCapacity {
  if (raw === undefined) return ON_DEMAND;
  const stages = contextObject(raw, key, EXAMPLE);
  const parsed = z.record(z.string(), stageCapacity).safeParse(stages);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const known = issue.code === 'unrecognized_keys' && issue.path.at(-1) === 'tables';
      return `${issue.path.join('.') || '(root)'}: ${issue.message}${known ? ` (tables: ${tableNames.join(', ')})` : ''}`;
    });
    throw new Error(`Context ${key}: ${problems.join('; ')}. Example: ${EXAMPLE}`);
  }
  return parsed.data[stage] ?? ON_DEMAND;
}

/** The table's auto scaling bounds when the stage provisions it; undefined keeps it on demand. */
export function boundsOf(capacity: TableCapacity, table: TableName): TableBounds | undefined {
  return capacity.mode === 'provisioned' ? capacity.tables[table] : undefined;
}
