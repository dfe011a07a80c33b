// Scopes an API key can carry (spec §5.4), and the access rule a route declares.

export const SCOPES = ['email:send', 'email:read', 'domain:read', 'webhook:read', 'webhook:write'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What a route requires: one named scope, `full` (every scope: API keys, domain create/delete, contacts;
 * DESIGN §3), `key` (any valid API key, whatever its scopes: the event catalog, which holds nothing of an
 * account), or `public` (no API key at all, e.g. one-click unsubscribe).
 */
export type Access = { scope: Scope } | 'full' | 'key' | 'public';

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

export function isFullAccess(scopes: readonly Scope[]): boolean {
  return SCOPES.every((scope) => scopes.includes(scope));
}

export function allows(access: Access, scopes: readonly Scope[]): boolean {
  if (access === 'public' || access === 'key') return true;
  if (access === 'full') return isFullAccess(scopes);
  return scopes.includes(access.scope);
}

export function isSubset(requested: readonly Scope[], held: readonly Scope[]): boolean {
  return requested.every((scope) => held.includes(scope));
}

/** Human description of what a route needs, for 403 messages. */
export function describeAccess(access: Access): string {
  if (access === 'public') return 'no API key';
  if (access === 'full') return 'a full-access key (all scopes)';
  if (access === 'key') return 'any valid API key (any scope)';
  return `scope ${access.scope}`;
}

/** Resend's key permissions: `full_access` is every scope, `sending_access` is `email:send` alone. */
export const PERMISSIONS = ['full_access', 'sending_access'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export function scopesOfPermission(permission: Permission): Scope[] {
  return permission === 'full_access' ? [...SCOPES] : ['email:send'];
}

/** The permission a key's scopes amount to, or `custom` for any other set (keys made with `scopes`). */
export function permissionOf(scopes: readonly Scope[]): Permission | 'custom' {
  if (isFullAccess(scopes)) return 'full_access';
  return scopes.length === 1 && scopes[0] === 'email:send' ? 'sending_access' : 'custom';
}

/** Canonical order, duplicates removed: what we store and return. */
export function normalizeScopes(scopes: readonly Scope[]): Scope[] {
  return SCOPES.filter((scope) => scopes.includes(scope));
}
