// The templates store (docs/templates.md). A template is a small record (its name, alias, and which version is the
// draft and which is published) and its versions, each stored once and never changed: editing writes a new draft
// version and moves the record to it, publishing moves the record's published pointer. So the record's one
// conditional write (on its revision) is the commit point of every change, and no transaction is needed.
import type { TemplateContent } from '../../domain/templates/templates';
import type { Tenant } from '../webhooks/ports';

export interface TemplateRecord extends Tenant {
  readonly id: string;
  readonly name: string;
  readonly alias?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Counts the record's writes: each change is written only over the revision it read. */
  readonly rev: number;
  /** The version being edited (`current_version_id`). */
  readonly draftVersionId: string;
  /** The version sends render; absent until the first publish. */
  readonly publishedVersionId?: string;
  readonly publishedAt?: string;
}

export interface TemplateVersion extends TemplateContent {
  readonly id: string;
  readonly createdAt: string;
}

export interface TemplatePage {
  readonly items: readonly TemplateRecord[];
  readonly hasMore: boolean;
}

/** Newest first; `after` (older than that id) or `before` (newer than it). */
export interface TemplatePageQuery {
  readonly limit: number;
  readonly after?: string;
  readonly before?: string;
}

export interface TemplateRepository {
  /** Stores a new record; false when the id exists. */
  create(record: TemplateRecord): Promise<boolean>;
  get(tenant: Tenant, id: string, options?: { readonly consistent?: boolean }): Promise<TemplateRecord | null>;
  /** Writes `next` (its rev one above `expectedRev`) only over revision `expectedRev` of a record still there. */
  replace(next: TemplateRecord, expectedRev: number): Promise<boolean>;
  /** Removes the record; false when there was none. */
  delete(tenant: Tenant, id: string): Promise<boolean>;
  list(tenant: Tenant, query: TemplatePageQuery): Promise<TemplatePage>;
  /** Templates of the tenant (the per-mode limit). */
  count(tenant: Tenant): Promise<number>;

  /** Stores a version of the template (new ids only: versions never change). */
  putVersion(tenant: Tenant, templateId: string, version: TemplateVersion): Promise<void>;
  getVersion(tenant: Tenant, templateId: string, versionId: string): Promise<TemplateVersion | null>;
  /** Deletes one version (nothing when it is gone already). */
  deleteVersion(tenant: Tenant, templateId: string, versionId: string): Promise<void>;
  /** Deletes every version of the template (after the template itself, and any a crash left behind). */
  deleteVersions(tenant: Tenant, templateId: string): Promise<void>;

  /**
   * Points `alias` at the template if no claim holds it, or (`staleOwner`) if the claim is still that template's:
   * true when it now points at `templateId`. Whether a claim is stale is the caller's to decide (app/templates).
   */
  claimAlias(tenant: Tenant, alias: string, templateId: string, staleOwner?: string): Promise<boolean>;
  /** The id the alias points at, or null (the caller checks the template still has the alias). */
  aliasOwner(tenant: Tenant, alias: string): Promise<string | null>;
  /** Drops the alias's claim if it is still this template's. */
  releaseAlias(tenant: Tenant, alias: string, templateId: string): Promise<void>;
}
