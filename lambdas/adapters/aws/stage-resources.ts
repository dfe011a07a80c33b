// The Resource Groups Tagging API as the data-stack guard sees it: every DynamoDB table and Secrets Manager
// secret of this account and region that carries a given tag, with all its tags (CloudFormation's among them).
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
