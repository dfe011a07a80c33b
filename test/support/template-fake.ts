// The in-memory TemplateRepository: what the use-case tests run on. The contract suite
// (test/contract/suites/template-repository.ts) holds it to the DynamoDB adapter's behaviour.
import type {
  TemplatePage,
  TemplatePageQuery,
  TemplateRecord,
  TemplateRepository,
  TemplateVersion,
} from '../../lambdas/app/templates/ports';
import type { Tenant } from '../../lambdas/app/webhooks/ports';

const tenantKey = (tenant: Tenant) => `${tenant.accountId}#${tenant.mode}`;
const clone = <T>(value: T): T => structuredClone(value);

export class InMemoryTemplateRepository implements TemplateRepository {
  readonly records = new Map<string, TemplateRecord>();
  readonly versions = new Map<string, Map<string, TemplateVersion>>();
  readonly aliases = new Map<string, string>();

  private key(tenant: Tenant, id: string) {
    return `${tenantKey(tenant)}|${id}`;
  }

  async create(record: TemplateRecord): Promise<boolean> {
    const key = this.key(record, record.id);
    if (this.records.has(key)) return false;
    this.records.set(key, clone(record));
    return true;
  }

  async get(tenant: Tenant, id: string): Promise<TemplateRecord | null> {
    const found = this.records.get(this.key(tenant, id));
    return found ? clone(found) : null;
  }

  async replace(next: TemplateRecord, expectedRev: number): Promise<boolean> {
    const key = this.key(next, next.id);
    if (this.records.get(key)?.rev !== expectedRev) return false;
    this.records.set(key, clone(next));
    return true;
  }

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    return this.records.delete(this.key(tenant, id));
  }

  async list(tenant: Tenant, query: TemplatePageQuery): Promise<TemplatePage> {
    const prefix = `${tenantKey(tenant)}|`;
    const all = [...this.records.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .map(([, record]) => record)
      .sort((a, b) => (a.id < b.id ? 1 : -1));
    if (query.before !== undefined) {
      const newer = all.filter((r) => r.id > (query.before as string)).reverse();
      return { items: clone(newer.slice(0, query.limit).reverse()), hasMore: newer.length > query.limit };
    }
    const older = query.after === undefined ? all : all.filter((r) => r.id < (query.after as string));
    return { items: clone(older.slice(0, query.limit)), hasMore: older.length > query.limit };
  }

  async count(tenant: Tenant): Promise<number> {
    const prefix = `${tenantKey(tenant)}|`;
    return [...this.records.keys()].filter((key) => key.startsWith(prefix)).length;
  }

  async putVersion(tenant: Tenant, templateId: string, version: TemplateVersion): Promise<void> {
    const key = this.key(tenant, templateId);
    const versions = this.versions.get(key) ?? new Map<string, TemplateVersion>();
    versions.set(version.id, clone(version));
    this.versions.set(key, versions);
  }

  async getVersion(tenant: Tenant, templateId: string, versionId: string): Promise<TemplateVersion | null> {
    const found = this.versions.get(this.key(tenant, templateId))?.get(versionId);
    return found ? clone(found) : null;
  }

  async deleteVersion(tenant: Tenant, templateId: string, versionId: string): Promise<void> {
    this.versions.get(this.key(tenant, templateId))?.delete(versionId);
  }

  async deleteVersions(tenant: Tenant, templateId: string): Promise<void> {
    this.versions.delete(this.key(tenant, templateId));
  }

  async claimAlias(tenant: Tenant, alias: string, templateId: string, staleOwner?: string): Promise<boolean> {
    const key = this.key(tenant, alias);
    const owner = this.aliases.get(key);
    if (owner !== undefined && owner !== staleOwner) return false;
    this.aliases.set(key, templateId);
    return true;
  }

  async aliasOwner(tenant: Tenant, alias: string): Promise<string | null> {
    return this.aliases.get(this.key(tenant, alias)) ?? null;
  }

  async releaseAlias(tenant: Tenant, alias: string, templateId: string): Promise<void> {
    const key = this.key(tenant, alias);
    if (this.aliases.get(key) === templateId) this.aliases.delete(key);
  }

  /** Every version stored for the template (tests of clean-up). */
  versionIds(tenant: Tenant, templateId: string): string[] {
    return [...(this.versions.get(this.key(tenant, templateId))?.keys() ?? [])].sort();
  }
}
