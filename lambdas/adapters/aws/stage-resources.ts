// What the data-stack guard reads: from the Resource Groups Tagging API, every DynamoDB table and Secrets
// Manager secret of this account and region that carries a given tag, with all its tags (CloudFormation's among
// them); from CloudFormation, the physical ids of the resources the guard's own stack holds.
import { type CloudFormationClient, ListStackResourcesCommand } from '@aws-sdk/client-cloudformation';
import { GetResourcesCommand, type ResourceGroupsTaggingAPIClient } from '@aws-sdk/client-resource-groups-tagging-api';

/** What a stage keeps beyond its stacks: retained tables and the link-signing secret. */
export const DATA_RESOURCE_TYPES = ['dynamodb:table', 'secretsmanager:secret'] as const;

export interface TaggedResource {
  readonly arn: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** Every page of GetResources for resources tagged `key=value` (the API ends with an empty PaginationToken). */
export async function listTaggedDataResources(
  client: ResourceGroupsTaggingAPIClient,
  tag: { readonly key: string; readonly value: string },
): Promise<TaggedResource[]> {
  const found: TaggedResource[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new GetResourcesCommand({
        TagFilters: [{ Key: tag.key, Values: [tag.value] }],
        ResourceTypeFilters: [...DATA_RESOURCE_TYPES],
        ...(token ? { PaginationToken: token } : {}),
      }),
    );
    for (const mapping of page.ResourceTagMappingList ?? []) {
      if (!mapping.ResourceARN) continue;
      const tags = Object.fromEntries((mapping.Tags ?? []).map((t) => [t.Key ?? '', t.Value ?? '']));
      found.push({ arn: mapping.ResourceARN, tags });
    }
    token = page.PaginationToken || undefined;
  } while (token);
  return found;
}

/**
 * Physical ids of every resource in the stack so far (a table's is its name, a secret's its ARN), following
 * every page. Imported resources are among them, whatever stack their aws:cloudformation tags still name.
 */
export async function listStackPhysicalIds(client: CloudFormationClient, stackId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListStackResourcesCommand({ StackName: stackId, ...(token ? { NextToken: token } : {}) }),
    );
    for (const summary of page.StackResourceSummaries ?? []) {
      if (summary.PhysicalResourceId) ids.add(summary.PhysicalResourceId);
    }
    token = page.NextToken || undefined;
  } while (token);
  return ids;
}
