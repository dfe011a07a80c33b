// Lambda entry point of the data-stack guard (lib/constructs/stage-guard.ts), invoked by the CDK Provider
// framework, which turns a thrown error into a failed resource whose reason CloudFormation shows. On Create it
// refuses while tables or secrets tagged with this stage exist that are neither resources of this stack nor
// tagged as created by it: data retained by an earlier data stack of the stage. Update and Delete do nothing
// (the guard protects a stack's birth; afterwards the stack owns its data).
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { ResourceGroupsTaggingAPIClient } from '@aws-sdk/client-resource-groups-tagging-api';
import * as z from 'zod';
import { listStackPhysicalIds, listTaggedDataResources, type TaggedResource } from '../../adapters/aws/stage-resources';

/** CloudFormation tags every resource it creates with its stack's id; a retained one keeps the old stack's. */
export const STACK_ID_TAG = 'aws:cloudformation:stack-id';
/** Where the refusal sends the operator. */
export const RUNBOOK = 'docs/runbook.md, "Destroy and redeploy"';
/** CloudFormation's status reason is short: name this many leftovers, count the rest. */
const LISTED = 8;

const properties = z.object({
  TagKey: z.string().min(1),
  Stage: z.string().min(1),
  StackId: z.string().min(1),
});
export type StageGuardProperties = z.infer<typeof properties>;

const event = z.object({
  RequestType: z.enum(['Create', 'Update', 'Delete']),
  ResourceProperties: properties,
});

export class StrandedDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StrandedDataError';
  }
}

/**
 * Tagged resources that are not in this stack (`ownIds`: physical ids, a table's name or a secret's ARN) and
 * not tagged with its id either.
 */
export function strandedResources(
  found: readonly TaggedResource[],
  ownIds: ReadonlySet<string>,
  stackId: string,
): TaggedResource[] {
  const own = (arn: string) => ownIds.has(arn) || ownIds.has(tableName(arn) ?? '');
  return found.filter((resource) => !own(resource.arn) && resource.tags[STACK_ID_TAG] !== stackId);
}

/** `arn:aws:dynamodb:…:table/NAME` → NAME; undefined for anything else. */
function tableName(arn: string): string | undefined {
  return /^arn:[^:]+:dynamodb:[^:]*:[^:]*:table\/([^/]+)$/.exec(arn)?.[1];
}

/** The refusal CloudFormation shows: what was found, where it came from, and what to do. */
export function refusal(stranded: readonly TaggedResource[], guard: StageGuardProperties): string {
  const listed = stranded.slice(0, LISTED).map((resource) => {
    const from = resource.tags[STACK_ID_TAG];
    return `${resource.arn}${from ? ` (from ${from})` : ''}`;
  });
  const more = stranded.length > LISTED ? [`and ${stranded.length - LISTED} more`] : [];
  return (
    `Sendflow stage ${guard.Stage}: ${stranded.length} table(s) or secret(s) tagged ` +
    `${guard.TagKey}=${guard.Stage} were retained by an earlier data stack of this stage, and a new stack would ` +
    `orphan them behind empty ones: ${[...listed, ...more].join('; ')}. Re-adopt them with \`cdk import\`, or ` +
    `delete them (or remove their ${guard.TagKey} tag), then deploy again. See ${RUNBOOK}.`
  );
}

export interface StageGuardClients {
  readonly tagging: ResourceGroupsTaggingAPIClient;
  readonly cloudFormation: CloudFormationClient;
}

/** Throws StrandedDataError on Create when leftovers exist; answers the Provider framework otherwise. */
export function createStageGuardHandler(clients: StageGuardClients) {
  return async (input: unknown): Promise<Record<string, never>> => {
    const { RequestType, ResourceProperties: guard } = event.parse(input);
    if (RequestType !== 'Create') return {};
    const found = await listTaggedDataResources(clients.tagging, { key: guard.TagKey, value: guard.Stage });
    if (!found.length) return {};
    const ownIds = await listStackPhysicalIds(clients.cloudFormation, guard.StackId);
    const stranded = strandedResources(found, ownIds, guard.StackId);
    if (stranded.length) throw new StrandedDataError(refusal(stranded, guard));
    return {};
  };
}

export const handler = createStageGuardHandler({
  tagging: new ResourceGroupsTaggingAPIClient({}),
  cloudFormation: new CloudFormationClient({}),
});
