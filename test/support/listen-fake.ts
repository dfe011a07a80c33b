// The in-memory ListenSessionRepository: the use-case tests' stand-in for the DynamoDB adapter, held to the same
// contract (test/contract/suites/listen-session-repository.ts).
import type { ListenEvent, ListenSession, ListenSessionRepository } from '../../lambdas/app/listen/ports';
import type { Tenant } from '../../lambdas/app/webhooks/ports';
import { ConflictError } from '../../lambdas/domain/errors';
import { isLive } from '../../lambdas/domain/listen';

export class InMemoryListenSessionRepository implements ListenSessionRepository {
  readonly sessions = new Map<string, ListenSession>();
  readonly events = new Map<string, Map<string, ListenEvent>>();

  async create(session: ListenSession): Promise<void> {
    if (this.sessions.has(session.id)) throw new ConflictError(`Listen session ${session.id} exists.`);
    this.sessions.set(session.id, structuredClone(session));
  }

  async listLive(accountId: string, nowMs: number): Promise<ListenSession[]> {
    return [...this.sessions.values()]
      .filter((s) => s.accountId === accountId && isLive(s.expiresAt, nowMs))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((s) => structuredClone(s));
  }

  async touch(tenant: Tenant, id: string, expiresAt: number, nowMs: number): Promise<ListenSession | null> {
    const session = this.owned(tenant, id);
    if (!session || !isLive(session.expiresAt, nowMs)) return null;
    const touched = { ...session, expiresAt };
    this.sessions.set(id, touched);
    return structuredClone(touched);
  }

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    if (!this.owned(tenant, id)) return false;
    return this.sessions.delete(id);
  }

  async putEvents(events: readonly ListenEvent[]): Promise<void> {
    for (const event of events) {
      const held = this.events.get(event.sessionId) ?? new Map<string, ListenEvent>();
      held.set(event.cursor, structuredClone(event));
      this.events.set(event.sessionId, held);
    }
  }

  async readEvents(
    sessionId: string,
    range: { readonly after: string | null; readonly before: string; readonly limit: number },
    nowMs: number,
  ): Promise<ListenEvent[]> {
    // As the key range of the adapter: cursors after `after`, below `before`, the first `limit`, then unexpired.
    return [...(this.events.get(sessionId)?.values() ?? [])]
      .filter((e) => (range.after === null || e.cursor > range.after) && e.cursor < range.before)
      .sort((a, b) => (a.cursor < b.cursor ? -1 : 1))
      .slice(0, range.limit)
      .filter((e) => isLive(e.expiresAt, nowMs))
      .map((e) => structuredClone(e));
  }

  private owned(tenant: Tenant, id: string): ListenSession | undefined {
    const session = this.sessions.get(id);
    return session && session.accountId === tenant.accountId && session.mode === tenant.mode ? session : undefined;
  }
}
