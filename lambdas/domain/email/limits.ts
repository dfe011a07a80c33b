// What an email may carry, as SES v2 SendEmail would take it (docs/architecture.md, "Input limits"): refused at
// the API with a reason, never accepted here to fail on AWS only. Each rule returns the problem in words, or null.

export const EMAIL_LIMITS = {
  /** Recipients across to, cc and bcc: SES's 50 per message. */
  recipients: 50,
  replyTo: 10,
  /** Custom headers per email. SES names no cap; ours keeps the stored item and the MIME header block small. */
  headers: 50,
  /** SES MessageHeader: name 1 to 126 printable ASCII characters but ':'; value 1 to 870 printable ASCII. */
  headerName: 126,
  headerValue: 870,
  /** RFC 5322's line limit, which SES applies to the Subject line. */
  subject: 998,
  displayName: 256,
  /**
   * The email as stored (addresses, subject, html, text, headers, tags, each recipient's unsubscribe link): far
   * below DynamoDB's 400 KB item, leaving room for the record's own bookkeeping. SES's 40 MB is never the bound.
   */
  storedBytes: 256 * 1024,
} as const;

const HEADER_NAME = /^[!-9;-@A-~]+$/;
const HEADER_VALUE = /^[ -~]+$/;
/** C0 and C1 controls and DEL: never in a subject or a display name (CR/LF would be header injection). */
const CONTROL = /\p{Cc}/u;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Headers SES or Sendflow sets, refused case-insensitively. SES builds From, To, Cc, Bcc, Subject, Reply-To and
 * the MIME structure from the request and refuses a second copy of them (they may appear once); it replaces Date
 * and Message-ID, owns Return-Path and Sender (its MAIL FROM) and DKIM-Signature (Easy DKIM); X-SES-* are its
 * control headers (configuration set, tags, source ARN), which would bypass our configuration set. Sendflow sets
 * List-Unsubscribe and List-Unsubscribe-Post on each recipient's copy (RFC 8058).
 */
export const RESTRICTED_HEADERS = [
  'From',
  'To',
  'Cc',
  'Bcc',
  'Subject',
  'Reply-To',
  'Return-Path',
  'Sender',
  'Date',
  'Message-ID',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'DKIM-Signature',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
] as const;
const RESTRICTED = new Set(RESTRICTED_HEADERS.map((name) => name.toLowerCase()));
export const RESTRICTED_HEADER_PREFIX = 'X-SES-';

export function headerNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > EMAIL_LIMITS.headerName || !HEADER_NAME.test(name)) {
    return `Header names are 1 to ${EMAIL_LIMITS.headerName} printable ASCII characters without spaces or ":".`;
  }
  const lower = name.toLowerCase();
  if (RESTRICTED.has(lower) || lower.startsWith(RESTRICTED_HEADER_PREFIX.toLowerCase())) {
    return `${name} is set by Sendflow or SES and cannot be given (restricted: ${RESTRICTED_HEADERS.join(', ')}, ${RESTRICTED_HEADER_PREFIX}*).`;
  }
  return null;
}

export function headerValueProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'Header values are strings.';
  if (value.length === 0 || value.length > EMAIL_LIMITS.headerValue || !HEADER_VALUE.test(value)) {
    return `Header values are 1 to ${EMAIL_LIMITS.headerValue} printable ASCII characters (no CR, LF or other controls; encode other text first).`;
  }
  return null;
}

/** Control characters, or a lone UTF-16 surrogate (not encodable as UTF-8, so not sendable). */
export function unsafeTextProblem(text: string): string | null {
  if (CONTROL.test(text)) return 'Control characters (CR, LF, tab, NUL, …) are not allowed.';
  if (LONE_SURROGATE.test(text)) return 'Contains an unpaired UTF-16 surrogate.';
  return null;
}

/** Bytes of the email as it is stored (its JSON form: at least what DynamoDB counts for the item). */
export function storedBytes(record: unknown): number {
  return Buffer.byteLength(JSON.stringify(record) ?? '', 'utf8');
}

export interface HeaderProblem {
  /** The header's name, or null for the headers as a whole (their count, their type, a malformed name). */
  readonly name: string | null;
  readonly message: string;
}

/**
 * The `headers` object of a request, checked whole: at most 50, each name and value as SES takes them. The
 * result has no prototype, so a header named `__proto__`, `constructor` or `toString` is one more header, never
 * a property of Object.prototype (JSON.parse makes such keys own properties; reading them here keeps them).
 */
export function parseHeaders(input: unknown): { headers: Record<string, string>; problems: HeaderProblem[] } {
  const headers: Record<string, string> = Object.create(null);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { headers, problems: [{ name: null, message: 'must be an object of header names to values.' }] };
  }
  const entries = Object.entries(input);
  if (entries.length > EMAIL_LIMITS.headers) {
    return { headers, problems: [{ name: null, message: `must hold at most ${EMAIL_LIMITS.headers} headers.` }] };
  }
  const problems: HeaderProblem[] = [];
  for (const [name, value] of entries) {
    const nameProblem = headerNameProblem(name);
    if (nameProblem) {
      const shown =
        name.length > 40 ? `${JSON.stringify(name.slice(0, 40))}… (${name.length} characters)` : JSON.stringify(name);
      // A malformed name is not repeated as a path: it may be 5,000 characters of anything.
      problems.push(
        HEADER_NAME.test(name) && name.length <= EMAIL_LIMITS.headerName
          ? { name, message: nameProblem }
          : { name: null, message: `${shown}: ${nameProblem}` },
      );
      continue;
    }
    const valueProblem = headerValueProblem(value);
    if (valueProblem) problems.push({ name, message: valueProblem });
    else headers[name] = value as string;
  }
  return { headers, problems };
}
