// The manifest: routes, tables and functions as plain data. lib/ (CDK) and the local runtime both read it,
// so what deploys and what runs locally cannot drift. Nothing here imports aws-cdk-lib.
import type { Access } from './domain/scopes';

/** The API Gateway stage: it is the `/v1` of every public path (spec §9). */
export const STAGE = 'v1';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteSpec {
  /** Stable operation id: the handler key and the OpenAPI operationId. */
  readonly id: string;
  readonly method: HttpMethod;
  /** API Gateway resource path below the stage, with `{param}` segments; public path is `/v1` + path. */
  readonly path: string;
  readonly access: Access;
  readonly summary: string;
  /** Counts toward the plan's request window (everything but public routes). */
  readonly rateLimited?: false;
}

export const routes: readonly RouteSpec[] = [
  { id: 'createApiKey', method: 'POST', path: '/api-keys', access: 'full', summary: 'Create an API key' },
  { id: 'listApiKeys', method: 'GET', path: '/api-keys', access: 'full', summary: 'List API keys' },
  { id: 'revokeApiKey', method: 'DELETE', path: '/api-keys/{id}', access: 'full', summary: 'Revoke an API key' },
];

export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey?: string;
}

export interface TableSpec {
  readonly partitionKey: string;
  readonly sortKey?: string;
  /** Number attribute of epoch seconds; DynamoDB TTL deletes lazily, so reads filter on it too. */
  readonly ttlAttribute?: string;
  readonly indexes?: readonly IndexSpec[];
  /** Stateful data the platform keeps when the stack is replaced. */
  readonly retain: boolean;
}

/** Every key attribute is a string. */
export const tables = {
  accounts: { partitionKey: 'id', retain: true },
  apiKeys: {
    partitionKey: 'hash',
    indexes: [{ name: 'byAccount', partitionKey: 'accountId', sortKey: 'createdAt' }],
    retain: true,
  },
  rateLimits: { partitionKey: 'key', ttlAttribute: 'expiresAt', retain: false },
} as const satisfies Record<string, TableSpec>;

export type TableName = keyof typeof tables;
export const tableNames = Object.keys(tables) as TableName[];

/** Environment variable that carries a table's physical name into a function. */
export function tableEnvVar(table: TableName): string {
  return `SF_TABLE_${table.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}
