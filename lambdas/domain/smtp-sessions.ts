// Who may hold the local inbound SMTP server's connections (docs/inbound.md, "Locally: the SMTP server of npm
// start"): a cap per client address and one per recipient domain beside the global one, and, when every
// connection is taken, a newcomer served in place of a connection that has waited longest without sending
// mail. Pure bookkeeping (the adapter keeps the clock's readings and closes connections); no I/O.
import ipaddr from 'ipaddr.js';

export interface SessionCaps {
  /** Connections served at once. */
  readonly maxConnections: number;
  /** Connections of one client (an IPv4 address, an IPv6 /64) at once. */
  readonly perClient: number;
  /** Sessions holding a recipient at one domain at once (from its RCPT until its message ends). */
  readonly perDomain: number;
  /**
   * When every connection is taken, one that has waited at least this long without beginning a message (not in
   * DATA) gives its place to a newcomer.
   */
  readonly evictIdleAfterMs: number;
}

/**
 * The client a connection counts for: an IPv4 address (IPv4-mapped IPv6 too) whole, an IPv6 address by its /64
 * (one host or one network usually holds a whole /64, so its addresses count as one client).
 */
export function clientOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

export type Admission =
  | {
      readonly admitted: true /** A connection that gives its place: the caller closes it. */;
      readonly evicted?: string;
    }
  | { readonly admitted: false; readonly reason: 'client' | 'full' };

interface Session {
  readonly client: string;
  /** Epoch ms since when it waits for a message to begin; null while its DATA streams. */
  waitingSince: number | null;
  readonly domains: Set<string>;
}

export class SmtpSessionTable {
  private readonly sessions = new Map<string, Session>();
  private readonly clients = new Map<string, number>();
  private readonly domains = new Map<string, number>();

  constructor(private readonly caps: SessionCaps) {}

  /** A new connection from `address` at `now`: admitted (maybe in place of another), or why not. */
  admit(id: string, address: string, now: number): Admission {
    const client = clientOf(address);
    if ((this.clients.get(client) ?? 0) >= this.caps.perClient) return { admitted: false, reason: 'client' };
    let evicted: string | undefined;
    if (this.sessions.size >= this.caps.maxConnections) {
      evicted = this.longestWaiting(now);
      if (evicted === undefined) return { admitted: false, reason: 'full' };
      this.leave(evicted);
    }
    this.sessions.set(id, { client, waitingSince: now, domains: new Set() });
    bump(this.clients, client, 1);
    return evicted === undefined ? { admitted: true } : { admitted: true, evicted };
  }

  /**
   * The session takes a place at `domain` (at its RCPT there). True if it has one already; false when the
   * domain's places are all taken (the caller refuses the recipient).
   */
  holdDomain(id: string, domain: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    if (session.domains.has(domain)) return true;
    if ((this.domains.get(domain) ?? 0) >= this.caps.perDomain) return false;
    session.domains.add(domain);
    bump(this.domains, domain, 1);
    return true;
  }

  /** Its DATA begins: it is no longer waiting (never given up for a newcomer while its message streams). */
  beginMessage(id: string): void {
    const session = this.sessions.get(id);
    if (session) session.waitingSince = null;
  }

  /** Its message ended (accepted or refused), or a new one begins (MAIL): its domains are freed. */
  endMessage(id: string, now: number): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.freeDomains(session);
    if (session.waitingSince === null) session.waitingSince = now;
  }

  /** Its MAIL FROM: a new transaction; the previous one's domains are freed (its waiting clock runs on). */
  newTransaction(id: string): void {
    const session = this.sessions.get(id);
    if (session) this.freeDomains(session);
  }

  /** The connection closed (or was given up): everything it held is freed. False if it was not here. */
  leave(id: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    this.freeDomains(session);
    bump(this.clients, session.client, -1);
    this.sessions.delete(id);
    return true;
  }

  has(id: string): boolean {
    return this.sessions.has(id);
  }

  /** Connections held by a client (by its address), and sessions holding a domain: for tests and logs. */
  held(): { readonly connections: number; client(address: string): number; domain(name: string): number } {
    return {
      connections: this.sessions.size,
      client: (address) => this.clients.get(clientOf(address)) ?? 0,
      domain: (name) => this.domains.get(name) ?? 0,
    };
  }

  /**
   * The connection to give up for a newcomer: among those waiting for a message at least evictIdleAfterMs, one of
   * the client holding the most connections, the longest waiting of those. None while every one is busy.
   */
  private longestWaiting(now: number): string | undefined {
    let chosen: { id: string; load: number; since: number } | undefined;
    for (const [id, session] of this.sessions) {
      const since = session.waitingSince;
      if (since === null || now - since < this.caps.evictIdleAfterMs) continue;
      const load = this.clients.get(session.client) ?? 0;
      if (!chosen || load > chosen.load || (load === chosen.load && since < chosen.since)) {
        chosen = { id, load, since };
      }
    }
    return chosen?.id;
  }

  private freeDomains(session: Session): void {
    for (const domain of session.domains) bump(this.domains, domain, -1);
    session.domains.clear();
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
