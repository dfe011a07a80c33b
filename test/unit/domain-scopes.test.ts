// Unit tests for scopes (lambdas/domain/scopes.ts) and for the manifest's access table against DESIGN §3.
import { describe, expect, it } from 'vitest';
import {
  type Access,
  allows,
  describeAccess,
  isFullAccess,
  isScope,
  isSubset,
  normalizeScopes,
  SCOPES,
  type Scope,
} from '../../lambdas/domain/scopes';
import { routes } from '../../lambdas/manifest';

describe('SCOPES', () => {
  it('are exactly the five scopes of spec §2.4', () => {
    expect([...SCOPES].sort()).toEqual(['domain:read', 'email:read', 'email:send', 'webhook:read', 'webhook:write']);
  });

  it.each([
    ['email:send', true],
    ['webhook:write', true],
    ['webhook:admin', false],
    ['EMAIL:SEND', false],
    ['', false],
  ])('isScope(%j) is %s', (value, expected) => {
    expect(isScope(value)).toBe(expected);
  });
});

describe('allows', () => {
  const all: Scope[] = [...SCOPES];

  it.each<[string, Access, readonly Scope[], boolean]>([
    ['public, no scopes', 'public', [], true],
    ['public, all scopes', 'public', all, true],
    ['full, all scopes', 'full', all, true],
    ['full, all scopes in another order', 'full', [...all].reverse(), true],
    ['full, one missing', 'full', all.filter((s) => s !== 'webhook:write'), false],
    ['full, no scopes', 'full', [], false],
    ['scope held', { scope: 'webhook:read' }, ['webhook:read'], true],
    ['scope held among others', { scope: 'email:read' }, ['email:send', 'email:read'], true],
    ['scope not held', { scope: 'webhook:write' }, ['webhook:read'], false],
    ['scope, no scopes', { scope: 'email:send' }, [], false],
    ['any key, no scopes', 'key', [], true],
    ['any key, one scope', 'key', ['email:send'], true],
    ['any key, all scopes', 'key', all, true],
  ])('%s', (_, access, scopes, expected) => {
    expect(allows(access, scopes)).toBe(expected);
  });

  it('for a named scope, allows exactly the keys that hold it', () => {
    for (const scope of SCOPES) {
      for (const held of SCOPES) {
        expect(allows({ scope }, [held])).toBe(scope === held);
      }
    }
  });
});

describe('isFullAccess', () => {
  it('is true only when every scope is held', () => {
    expect(isFullAccess(SCOPES)).toBe(true);
    expect(isFullAccess([...SCOPES, 'email:send'])).toBe(true);
    for (const missing of SCOPES) {
      expect(isFullAccess(SCOPES.filter((s) => s !== missing))).toBe(false);
    }
    expect(isFullAccess([])).toBe(false);
  });
});

describe('isSubset', () => {
  it.each<[string, readonly Scope[], readonly Scope[], boolean]>([
    ['empty of anything', [], ['email:send'], true],
    ['empty of empty', [], [], true],
    ['equal sets', ['email:send', 'email:read'], ['email:read', 'email:send'], true],
    ['strict subset', ['email:send'], ['email:send', 'webhook:read'], true],
    ['one extra scope', ['email:send', 'webhook:write'], ['email:send'], false],
    ['disjoint', ['domain:read'], ['email:send'], false],
    ['anything of nothing', ['email:send'], [], false],
  ])('%s', (_, requested, held, expected) => {
    expect(isSubset(requested, held)).toBe(expected);
  });
});

describe('normalizeScopes', () => {
  it('returns canonical order with duplicates removed', () => {
    // Arrange
    const messy: Scope[] = ['webhook:write', 'email:send', 'webhook:write', 'domain:read', 'email:send'];

    // Act
    const normalized = normalizeScopes(messy);

    // Assert
    expect(normalized).toEqual(['email:send', 'domain:read', 'webhook:write']);
  });

  it('is idempotent and keeps the empty list empty', () => {
    expect(normalizeScopes(normalizeScopes([...SCOPES].reverse()))).toEqual([...SCOPES]);
    expect(normalizeScopes([])).toEqual([]);
  });
});

describe('describeAccess', () => {
  it('names what a route needs, for 403 messages', () => {
    expect(describeAccess({ scope: 'webhook:read' })).toContain('webhook:read');
    expect(describeAccess('full')).toMatch(/full-access/);
    expect(describeAccess('public')).toMatch(/no API key/);
    expect(describeAccess('key')).toMatch(/any valid API key/);
  });
});

/**
 * DESIGN §3 (and spec §4, §5.4) as an independent table: the access every route must declare. Path parameters
 * are written `{}` so the table does not depend on how a route names them. A route not listed here falls
 * under "everything else needs a full-access key"; only unsubscribe is public.
 */
const DESIGN_ACCESS: Record<string, Access> = {
  'POST /api-keys': 'full',
  'GET /api-keys': 'full',
  'DELETE /api-keys/{}': 'full',
  'POST /emails': { scope: 'email:send' },
  'POST /emails/batch': { scope: 'email:send' },
  // Not in DESIGN §3: cancelling a scheduled send belongs with sending it.
  'POST /emails/{}/cancel': { scope: 'email:send' },
  // Issue 19: moving a scheduled send's time belongs with sending it too, as cancelling does.
  'PATCH /emails/{}': { scope: 'email:send' },
  'GET /emails/{}': { scope: 'email:read' },
  'GET /emails': { scope: 'email:read' },
  'GET /emails/{}/events': { scope: 'email:read' },
  // Issue 19: an email's attachments, and received (inbound) emails with theirs, are read like emails.
  'GET /emails/{}/attachments': { scope: 'email:read' },
  'GET /emails/{}/attachments/{}': { scope: 'email:read' },
  'GET /emails/receiving': { scope: 'email:read' },
  'GET /emails/receiving/{}': { scope: 'email:read' },
  'GET /emails/receiving/{}/attachments': { scope: 'email:read' },
  'GET /emails/receiving/{}/attachments/{}': { scope: 'email:read' },
  'GET /domains': { scope: 'domain:read' },
  'GET /domains/{}': { scope: 'domain:read' },
  'POST /domains/{}/verify': { scope: 'domain:read' },
  'POST /domains': 'full',
  'DELETE /domains/{}': 'full',
  'GET /webhooks': { scope: 'webhook:read' },
  'GET /webhooks/{}': { scope: 'webhook:read' },
  'POST /webhooks': { scope: 'webhook:write' },
  'PUT /webhooks/{}': { scope: 'webhook:write' },
  'PATCH /webhooks/{}': { scope: 'webhook:write' },
  'DELETE /webhooks/{}': { scope: 'webhook:write' },
  'POST /webhooks/{}/test': { scope: 'webhook:write' },
  'GET /webhooks/{}/deliveries': { scope: 'webhook:read' },
  'GET /webhooks/{}/deliveries/{}': { scope: 'webhook:read' },
  'POST /webhooks/{}/deliveries/{}/retry': { scope: 'webhook:write' },
  // Issue 10: rotating changes the webhook; checking a signature only reads it.
  'POST /webhooks/{}/rotate-secret': { scope: 'webhook:write' },
  'POST /webhooks/{}/signature-check': { scope: 'webhook:read' },
  // Issue 32: trying a filter on an event reads nothing of the account and changes nothing.
  'POST /webhooks/filter-test': { scope: 'webhook:read' },
  // Simulating a transformation reads the webhook and sends and stores nothing.
  'POST /webhooks/{}/transformation/simulate': { scope: 'webhook:read' },
  'POST /webhooks/{}/recoveries': { scope: 'webhook:write' },
  'GET /webhooks/{}/recoveries': { scope: 'webhook:read' },
  'GET /webhooks/{}/recoveries/{}': { scope: 'webhook:read' },
  // Issue 30: Resend's names for the same operations take the same scopes (rotation and replay change; the events
  // are the delivery log, read).
  'POST /webhooks/{}/signing-secret/rotate': { scope: 'webhook:write' },
  // Issue 29: the account's sending figures (Resend's emails.metrics) are read as emails are.
  'GET /emails/metrics': { scope: 'email:read' },
  'GET /webhooks/{}/events': { scope: 'webhook:read' },
  'GET /webhooks/{}/events/{}': { scope: 'webhook:read' },
  'GET /webhooks/{}/events/{}/attempts': { scope: 'webhook:read' },
  'POST /webhooks/{}/events/{}/replay': { scope: 'webhook:write' },
  'POST /webhooks/{}/recoveries/{}/cancel': { scope: 'webhook:write' },
  'GET /emails/{}/deliveries': { scope: 'webhook:read' },
  // Issue 31: the delivery figures the charts draw are read as the delivery log is.
  'GET /webhooks/metrics': { scope: 'webhook:read' },
  'GET /webhooks/{}/metrics': { scope: 'webhook:read' },
  // Issue 18: a listen session is a webhook the CLI pulls: the scope that creates webhooks opens, polls and ends it.
  'POST /listen-sessions': { scope: 'webhook:write' },
  'GET /listen-sessions/{}/events': { scope: 'webhook:write' },
  'DELETE /listen-sessions/{}': { scope: 'webhook:write' },
  // Issue 11: the API reference and the OpenAPI document describe the API, and hold nothing of an account.
  'GET /reference': 'public',
  'GET /openapi.json': 'public',
  // Issue 18: the event catalog describes the payloads and holds nothing of an account; any valid key reads it.
  'GET /event-types': 'key',
};

function expectedAccess(method: string, path: string): Access {
  const key = `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;
  const listed = DESIGN_ACCESS[key];
  if (listed) return listed;
  // Links in emails: one-click unsubscribe and the contact's double opt-in confirmation.
  if (path.startsWith('/unsubscribe') || path.startsWith('/contacts/confirm')) return 'public';
  // Dashboard pages: no key at the gateway; the session cookie stands in for a full-access key (DESIGN §9).
  if (path.startsWith('/dashboard')) return 'public';
  return 'full';
}

describe('manifest routes declare the access of DESIGN §3', () => {
  it.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', (_, route) => {
    expect(route.access).toEqual(expectedAccess(route.method, route.path));
  });

  it('declares the three API key routes, each needing a full-access key', () => {
    // Arrange
    const apiKeyRoutes = routes.filter((route) => route.path.startsWith('/api-keys'));

    // Act
    const table = apiKeyRoutes.map((route) => `${route.method} ${route.path.replace(/\{[^}]+\}/g, '{}')}`).sort();

    // Assert
    expect(table).toEqual(['DELETE /api-keys/{}', 'GET /api-keys', 'POST /api-keys']);
    for (const route of apiKeyRoutes) {
      expect(
        allows(
          route.access,
          SCOPES.filter((s) => s !== 'email:send'),
        ),
      ).toBe(false);
      expect(allows(route.access, SCOPES)).toBe(true);
    }
  });

  it('has no duplicate method + path and unique ids', () => {
    const keys = routes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(routes.map((route) => route.id)).size).toBe(routes.length);
  });
});
