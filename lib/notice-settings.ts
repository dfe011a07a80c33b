// `sendflow:noticeFrom`: the address each stage mails the accounts' notices from (reputation warnings and pauses,
// webhooks Sendflow disabled: app/notices). Per stage, e.g. {"prod": "notices@mail.example.com"}, or with the SES
// identity that covers it when that is not the address's own domain: {"prod": {"address": "…", "identity": "…"}}.
// Checked at synth; a stage without one sends no notices on AWS (each is a log line, counted by a metric).
import { contextObject } from './context-object';

export const CONTEXT_NOTICE_FROM = 'sendflow:noticeFrom';

export interface NoticeSender {
  /** The From of every notice (SF_NOTICE_FROM): the functions may send as this address only (ses:FromAddress). */
  readonly address: string;
  /** The SES identity verified for it: the address, its domain or a parent domain (the grant's resource). */
  readonly identity: string;
}

const EXAMPLE = '{"prod": "notices@mail.example.com"}';
/** A bare address on a domain with a dot: letters, digits and the usual punctuation, no display name or spaces. */
const ADDRESS =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})$/;
const DOMAIN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** The stage's notice sender from `sendflow:noticeFrom` (every stage's entry is checked); undefined when it has none. */
export function parseNoticeFrom(raw: unknown, stage: string, key = CONTEXT_NOTICE_FROM): NoticeSender | undefined {
  if (raw === undefined) return undefined;
  const stages = contextObject(raw, key, EXAMPLE);
  const problems: string[] = [];
  const parsed = new Map<string, NoticeSender>();
  for (const [name, entry] of Object.entries(stages)) {
    const { address, identity, ...rest } =
      typeof entry === 'string'
        ? { address: entry, identity: undefined }
        : typeof entry === 'object' && entry !== null && !Array.isArray(entry)
          ? (entry as Record<string, unknown>)
          : { address: entry, identity: undefined };
    const unknown = Object.keys(rest);
    if (unknown.length) problems.push(`${name}: unknown setting ${unknown.join(', ')} (known: address, identity)`);
    const match = typeof address === 'string' && address.length <= 254 ? ADDRESS.exec(address) : null;
    if (!match) {
      problems.push(
        `${name}: must be an e-mail address on a domain, such as notices@mail.example.com, got ${JSON.stringify(address)}`,
      );
      continue;
    }
    const domain = (match[1] as string).toLowerCase();
    const covering = identity === undefined ? domain : identity;
    if (typeof covering !== 'string' || !coversAddress(covering, address as string, domain)) {
      problems.push(
        `${name}: identity must be the SES identity that covers ${String(address)} (the address, ${domain} or a parent domain), got ${JSON.stringify(identity)}`,
      );
      continue;
    }
    parsed.set(name, {
      address: address as string,
      identity: covering === address ? covering : covering.toLowerCase(),
    });
  }
  if (problems.length) throw new Error(`Context ${key}: ${problems.join('; ')}`);
  return parsed.get(stage);
}

function coversAddress(identity: string, address: string, domain: string): boolean {
  if (identity === address) return true;
  if (!DOMAIN.test(identity)) return false;
  const name = identity.toLowerCase();
  return domain === name || domain.endsWith(`.${name}`);
}
