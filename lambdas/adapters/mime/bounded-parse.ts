// postal-mime, bounded: the message is scanned first (domain/mime-scan, linear), and a message over a MIME limit
// is parsed for its header block only, so the parser never meets the thousands of parts that make its time grow
// with their square. What the parser throws on becomes a problem to report, with the header block parsed if that
// alone parses. This runs where the parse should run: in the parse thread (parse-thread.ts) locally and on AWS,
// or in the caller's thread for tests (InThreadMimeParser).
import PostalMime, { type Email } from 'postal-mime';
import type { MimeParser, ParsedMessage, ParseProblem } from '../../app/inbound/ports';
import { INBOUND_MIME_LIMITS, MAX_HEADER_BYTES, MAX_MIME_DEPTH } from '../../domain/inbound';
import { type MimeLimits, scanMime } from '../../domain/mime-scan';
import { EMPTY_EMAIL, type ParseScope } from './parsed';

export async function parseBounded(
  raw: Uint8Array,
  scope: ParseScope,
  limits: MimeLimits = INBOUND_MIME_LIMITS,
  problem: ParseProblem | null = null,
): Promise<ParsedMessage> {
  const scan = scanMime(raw, limits);
  // The header block is parseable unless the breach was in it (the scan stops at a breach, so it never ended).
  const headerBlock = scan.headerEnd === null ? (scan.breach ? null : raw) : raw.subarray(0, scan.headerEnd);
  if (scope === 'auto' && scan.breach === null) {
    try {
      return { scope: 'whole', email: await postalMime(raw), problem };
    } catch (error) {
      problem ??= { kind: 'failed', reason: reasonOf(error) };
    }
  } else if (scan.breach) {
    problem ??= { kind: 'limit', breach: scan.breach };
  }
  if (headerBlock === null) return { scope: 'none', email: EMPTY_EMAIL, problem };
  try {
    return { scope: 'headers', email: await postalMime(headerBlock), problem };
  } catch (error) {
    return { scope: 'none', email: EMPTY_EMAIL, problem: problem ?? { kind: 'failed', reason: reasonOf(error) } };
  }
}

function postalMime(raw: Uint8Array): Promise<Email> {
  return PostalMime.parse(raw, {
    maxNestingDepth: MAX_MIME_DEPTH,
    maxHeadersSize: MAX_HEADER_BYTES,
    attachmentEncoding: 'arraybuffer',
  });
}

/** The parser's own words, bounded (they may quote the message). */
function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200);
}

/** The parse in the caller's thread: no time-box (tests, tools). */
export class InThreadMimeParser implements MimeParser {
  constructor(private readonly limits: MimeLimits = INBOUND_MIME_LIMITS) {}

  parse(raw: Uint8Array): Promise<ParsedMessage> {
    return parseBounded(raw, 'auto', this.limits);
  }
}
