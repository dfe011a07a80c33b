// Templates in DynamoDB (the templates table, keyed tenant + id), three kinds of item:
//   tenant `acct#mode`, id `tpl_…`          the template's record (name, alias, its draft and published versions'
//                                           ids): small, so a listing reads names, never bodies;
//   tenant `acct#mode`, id `alias#<alias>`   the alias's claim (`templateId`): one per alias, so two templates of
//                                           a tenant never share one;
//   tenant `acct#mode#tpl_…`, id `tplv_…`   a version (subject, html, text, from, reply_to, variables), written
//                                           once, never changed: a send reads the published one by key.
// Versions live in their template's own partition, so a tenant's partition holds only records and claims.
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import type {
  TemplatePage,
  TemplatePageQuery,
  TemplateRecord,
  TemplateRepository,
  TemplateVersion,
} from '../../app/templates/ports';
import type { Tenant } from '../../app/webhooks/ports';
import { MODES } from '../../domain/api-keys';
import { TEMPLATE_ID_PREFIX, VARIABLE_TYPES } from '../../domain/templates/templates';
import { conditionHeld, queryAll } from './operations';
import { tenantKey } from './tenant-table';

const recordItem = z.object({
  id: z.string(),
  accountId: z.string(),
  mode: z.enum(MODES),
  name: z.string(),
  alias: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  rev: z.number().int(),
  draftVersionId: z.string(),
  publishedVersionId: z.string().optional(),
  publishedAt: z.string().optional(),
});

const versionItem = z.object({
  id: z.string(),
  createdAt: z.string(),
  subject: z.string().optional(),
  html: z.string(),
  text: z.string().optional(),
  from: z.string().optional(),
  replyTo: z.array(z.string()),
  variables: z.array(
    z.object({
      key: z.string(),
      type: z.enum(VARIABLE_TYPES),
      fallback: z.union([z.string(), z.number()]).optional(),
      unescaped: z.literal(true).optional(),
      createdAt: z.string(),
      updatedAt: z.string(),
    }),
  ),
});

const claimItem = z.object({ templateId: z.string() });

const RECORD_PREFIX = `${TEMPLATE_ID_PREFIX}_`;
/** Sorts after every record id (`tpl_` + lower-case base32). */
const RECORD_END = `${TEMPLATE_ID_PREFIX}_~`;
const aliasId = (alias: string) => `alias#${alias}`;
const versionsOf = (tenant: Tenant, templateId: string) => `${tenantKey(tenant)}#${templateId}`;

/** Drops undefined fields: the document client refuses them. */
function defined<T extends Record<string, unknown>>(item: T): T {
  return Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined)) as T;
}

export class DynamoTemplateRepository implements TemplateRepository {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  create(record: TemplateRecord): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: defined({ ...record, tenant: tenantKey(record) }),
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    );
  }

  async get(tenant: Tenant, id: string, options: { consistent?: boolean } = {}): Promise<TemplateRecord | null> {
    if (!id.startsWith(RECORD_PREFIX)) return null;
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { tenant: tenantKey(tenant), id },
        ...(options.consistent ? { ConsistentRead: true } : {}),
      }),
    );
    return Item ? (recordItem.parse(Item) as TemplateRecord) : null;
  }

  replace(next: TemplateRecord, expectedRev: number): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: defined({ ...next, tenant: tenantKey(next) }),
          ConditionExpression: 'rev = :rev',
          ExpressionAttributeValues: { ':rev': expectedRev },
        }),
      ),
    );
  }

  delete(tenant: Tenant, id: string): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { tenant: tenantKey(tenant), id },
          ConditionExpression: 'attribute_exists(id)',
        }),
      ),
    );
  }

  async list(tenant: Tenant, query: TemplatePageQuery): Promise<TemplatePage> {
    const newestFirst = query.before === undefined;
    const [lo, hi] = [query.before ?? RECORD_PREFIX, query.after ?? RECORD_END];
    const { Items = [] } = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'tenant = :t AND id BETWEEN :lo AND :hi',
        ExpressionAttributeValues: { ':t': tenantKey(tenant), ':lo': lo, ':hi': hi },
        ScanIndexForward: !newestFirst,
        // One more than the page tells whether there is more; one more again for the cursor itself (BETWEEN is
        // inclusive, and it is left out).
        Limit: query.limit + 2,
      }),
    );
    const records = Items.map((item) => recordItem.parse(item) as TemplateRecord).filter(
      (record) => record.id !== query.after && record.id !== query.before,
    );
    const page = records.slice(0, query.limit);
    return { items: newestFirst ? page : page.reverse(), hasMore: records.length > query.limit };
  }

  async count(tenant: Tenant): Promise<number> {
    const input: QueryCommandInput = {
      TableName: this.tableName,
      KeyConditionExpression: 'tenant = :t AND begins_with(id, :p)',
      ExpressionAttributeValues: { ':t': tenantKey(tenant), ':p': RECORD_PREFIX },
      Select: 'COUNT',
    };
    let count = 0;
    let cursor: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(new QueryCommand({ ...input, ExclusiveStartKey: cursor }));
      count += page.Count ?? 0;
      cursor = page.LastEvaluatedKey;
    } while (cursor);
    return count;
  }

  async putVersion(tenant: Tenant, templateId: string, version: TemplateVersion): Promise<void> {
    await this.doc.send(
      new PutCommand({
        TableName: this.tableName,
        Item: defined({
          tenant: versionsOf(tenant, templateId),
          id: version.id,
          createdAt: version.createdAt,
          subject: version.subject,
          html: version.html,
          text: version.text,
          from: version.from,
          replyTo: [...version.replyTo],
          variables: version.variables.map((variable) => defined({ ...variable })),
        }),
      }),
    );
  }

  async getVersion(tenant: Tenant, templateId: string, versionId: string): Promise<TemplateVersion | null> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { tenant: versionsOf(tenant, templateId), id: versionId } }),
    );
    return Item ? (versionItem.parse(Item) as TemplateVersion) : null;
  }

  async deleteVersion(tenant: Tenant, templateId: string, versionId: string): Promise<void> {
    await this.doc.send(
      new DeleteCommand({ TableName: this.tableName, Key: { tenant: versionsOf(tenant, templateId), id: versionId } }),
    );
  }

  async deleteVersions(tenant: Tenant, templateId: string): Promise<void> {
    const keys = await queryAll(this.doc, {
      TableName: this.tableName,
      KeyConditionExpression: 'tenant = :t',
      ExpressionAttributeValues: { ':t': versionsOf(tenant, templateId) },
      ProjectionExpression: 'tenant, id',
    });
    await Promise.all(keys.map((Key) => this.doc.send(new DeleteCommand({ TableName: this.tableName, Key }))));
  }

  claimAlias(tenant: Tenant, alias: string, templateId: string, staleOwner?: string): Promise<boolean> {
    return conditionHeld(
      this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { tenant: tenantKey(tenant), id: aliasId(alias), templateId },
          ...(staleOwner === undefined
            ? { ConditionExpression: 'attribute_not_exists(id)' }
            : {
                ConditionExpression: 'attribute_not_exists(id) OR templateId = :owner',
                ExpressionAttributeValues: { ':owner': staleOwner },
              }),
        }),
      ),
    );
  }

  async aliasOwner(tenant: Tenant, alias: string): Promise<string | null> {
    const { Item } = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { tenant: tenantKey(tenant), id: aliasId(alias) },
        ConsistentRead: true,
      }),
    );
    return Item ? claimItem.parse(Item).templateId : null;
  }

  async releaseAlias(tenant: Tenant, alias: string, templateId: string): Promise<void> {
    await conditionHeld(
      this.doc.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { tenant: tenantKey(tenant), id: aliasId(alias) },
          ConditionExpression: 'templateId = :id',
          ExpressionAttributeValues: { ':id': templateId },
        }),
      ),
    );
  }
}
