// Emails as the API accepts them (DESIGN §6) and the addresses in them.
import { domainToASCII } from 'node:url';
import type { AttachmentMeta } from './attachments';
import { EMAIL_LIMITS } from './limits';

/**
 * `a@b.c` or `Name <a@b.c>`, as SES v2 takes it: an ASCII dot-atom local part of at most 64 characters, a
 * domain of LDH labels (an internationalized one is sent as punycode), 254 characters in all; a display name
 * (quoted or not) without control characters, `<`, `>` or `@`. Returns the problem, or null.
 */
export function addressProblem(value: string): string | null {
  const trimmed = value.trim();
  if (CONTROL.test(trimmed)) return 'Control characters (CR, LF, NUL, …) are not allowed in an address.';
  const named = /^(.*?)\s*<([^<>]*)>$/.exec(trimmed);
  const name = named ? (named[1] ?? '').replace(/^"(.*)"$/, '$1') : '';
  const address = named ? (named[2] ?? '').trim() : trimmed;
  if (/[<>]/.test(name) || (!named && /[<>]/.test(trimmed))) return 'Write a named address as Name <a@example.com>.';
  if (name.includes('@')) return 'A display name cannot contain "@".';
  if (name.length > EMAIL_LIMITS.displayName)
    return `A display name is at most ${EMAIL_LIMITS.displayName} characters.`;
  if (LONE_SURROGATE.test(name)) return 'The display name contains an unpaired UTF-16 surrogate.';
  const at = address.lastIndexOf('@');
  if (at < 0) return 'An address needs an @.';
  const local = address.slice(0, at);
  const domain = asciiDomain(address.slice(at + 1));
  if (
    !LOCAL_PART.test(local) ||
    local.length > 64 ||
    local.startsWith('.') ||
    local.endsWith('.') ||
    local.includes('..')
  ) {
    return "The part before @ is 1 to 64 ASCII letters, digits and !#$%&'*+/=?^_`{|}~.- (no leading, trailing or double dot).";
  }
  if (!domain || !isHostName(domain)) return 'The part after @ must be a domain name such as example.com.';
  if (local.length + 1 + domain.length > 254) return 'An address is at most 254 characters.';
  return null;
}

export function isEmailAddress(value: string): boolean {
  return addressProblem(value) === null;
}

const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TOP_LABEL = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** The domain in ASCII (punycode for an internationalized one), lower-cased; '' when it is not a name at all. */
function asciiDomain(domain: string): string {
  if (/^[\x21-\x7e]*$/.test(domain)) return domain.toLowerCase();
  return domainToASCII(domain).toLowerCase();
}

function isHostName(domain: string): boolean {
  const labels = domain.split('.');
  return (
    domain.length <= 253 &&
    labels.length >= 2 &&
    labels.every((label) => LABEL.test(label)) &&
    TOP_LABEL.test(labels.at(-1) ?? '')
  );
}

/** The bare address of `Name <a@b.c>`, lower-cased. */
export function bareAddress(value: string): string {
  return (/<([^>]+)>/.exec(value)?.[1] ?? value).trim().toLowerCase();
}

export interface EmailMessage {
  readonly id: string;
  readonly accountId: string;
  readonly mode: 'live' | 'test';
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly replyTo: readonly string[];
  readonly subject: string;
  readonly html?: string;
  readonly text?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly tags: readonly { name: string; value: string }[];
  readonly createdAt: string;
  /** Metadata of its attachments (kept with the body; their bytes are files of their own). */
  readonly attachments?: readonly AttachmentMeta[];
  /** The template it was rendered from (a send with `template`): on GET, on its events and SES's tags. */
  readonly templateId?: string;
  /**
   * The trace of the request that accepted it (domain/trace-context.ts, compact), carried to its events; absent when
   * untraced. Stored on the email item (a release before it ignores the attribute).
   */
  readonly trace?: string;
}

/** Everyone the email goes to: each gets its own events. */
export function recipients(email: Pick<EmailMessage, 'to' | 'cc' | 'bcc'>): string[] {
  return [...email.to, ...email.cc, ...email.bcc];
}
