// A linear pre-scan of a MIME message, fed as it streams (SMTP DATA) or whole (a message that got in): it counts
// the parts a parser would open, how deep they nest, and each header block's fields and bytes, without building
// anything. Its cost is one pass over the bytes (a body line is looked at only when it starts with "--"), so it
// can run on the event loop while DATA arrives, and it decides, before any parser runs, whether a message is
// within the limits (MIME parsers' time grows with the square of the parts: 16,000 parts took postal-mime 11-30 s).
// It mirrors postal-mime's reading closely enough to be an upper bound for ordinary mail; the parse time-box
// (adapters/mime) covers what a scan cannot see (a base64-encoded message/rfc822 part, for one).

/** What one message may hold before it is refused at DATA (locally) or kept raw, its body unparsed. */
export interface MimeLimits {
  /** Parts opened by a boundary line, nested messages' included. */
  readonly maxParts: number;
  /** How deep parts nest (a multipart's children are one level below it). */
  readonly maxDepth: number;
  /** Fields in any one header block (the message's, or a part's). */
  readonly maxHeaderFields: number;
  /** Bytes of any one header block (line endings not counted, as postal-mime counts its maxHeadersSize). */
  readonly maxHeaderBytes: number;
}

export type MimeLimitName = 'parts' | 'depth' | 'header_fields' | 'header_bytes';

/** The first limit a message went past: the scan stops counting there (the message is over, whatever follows). */
export interface MimeLimitBreach {
  readonly limit: MimeLimitName;
  /** The count when the limit was passed (the limit + 1). */
  readonly found: number;
  readonly max: number;
}

export interface MimeScan {
  /** Bytes fed. */
  readonly bytes: number;
  readonly parts: number;
  readonly depth: number;
  /** Where the message's own header block ends (the first byte of its body); null if it never ended. */
  readonly headerEnd: number | null;
  readonly breach: MimeLimitBreach | null;
}

/** Content-Transfer-Encodings under which a nested message's lines are readable as they are. */
const IDENTITY_ENCODINGS = new Set(['', '7bit', '8bit', 'binary']);
const DASH = 0x2d;
const LF = 0x0a;
const CR = 0x0d;

interface Block {
  /** The depth of the part (or nested message) these headers belong to. */
  readonly depth: number;
  /** A part of a multipart/digest: without a Content-Type it is a message/rfc822. */
  readonly inDigest: boolean;
  fields: number;
  bytes: number;
  contentType: string;
  transferEncoding: string;
  /** Which field the continuation lines belong to. */
  current: 'content-type' | 'content-transfer-encoding' | null;
}

/** Streams a message through the scan: feed() each chunk as it arrives, then result(). */
export class MimeScanner {
  private bytes = 0;
  private parts = 0;
  private depth = 0;
  private headerEnd: number | null = null;
  private breach: MimeLimitBreach | null = null;
  /** Boundary (latin1) → the depth of its multipart and whether that multipart is a digest. */
  private readonly boundaries = new Map<string, { depth: number; digest: boolean }>();
  private longestBoundary = 0;
  /** The header block being read, or null in a body. */
  private block: Block | null;
  /** The line being read: the bytes kept of it, how many it has, whether it is worth keeping. */
  private line: Uint8Array[] = [];
  private lineLength = 0;
  private lineKept = 0;
  private lineIgnored = false;
  /** A byte other than space or tab beyond what was kept (a delimiter line may end only in whitespace). */
  private lineTailOther = false;

  constructor(private readonly limits: MimeLimits) {
    this.block = newBlock(0, false);
  }

  /** Takes the next bytes of the message; once a limit is passed the rest is only counted. */
  feed(chunk: Uint8Array): void {
    let pos = 0;
    while (pos < chunk.length && this.breach === null) {
      const newline = chunk.indexOf(LF, pos);
      const end = newline < 0 ? chunk.length : newline;
      if (newline >= 0 && this.lineLength === 0) {
        // The common case, a whole line in this chunk: read in place, nothing copied.
        this.endLine(this.lineOf(chunk, pos, end), end - pos, this.bytes + newline + 1);
      } else {
        this.take(chunk, pos, end);
        if (newline >= 0) {
          const line = this.lineIgnored ? null : concat(this.line, this.lineKept);
          this.endLine(line, this.lineLength, this.bytes + newline + 1);
        }
      }
      if (newline < 0) break;
      pos = newline + 1;
    }
    this.bytes += chunk.length;
  }

  /** The limit passed, as soon as it is (a DATA stream stops keeping the message there). */
  breached(): MimeLimitBreach | null {
    return this.breach;
  }

  result(): MimeScan {
    return { bytes: this.bytes, parts: this.parts, depth: this.depth, headerEnd: this.headerEnd, breach: this.breach };
  }

  /** A whole line's bytes worth reading (null: a body line that cannot be a delimiter). */
  private lineOf(chunk: Uint8Array, from: number, to: number): Uint8Array | null {
    if (this.block !== null) return chunk.subarray(from, Math.min(to, from + this.limits.maxHeaderBytes + 1));
    if (to - from < 2 || chunk[from] !== DASH || chunk[from + 1] !== DASH) return null;
    const kept = Math.min(to, from + this.longestBoundary + 4);
    this.lineTailOther = hasOther(chunk, kept, to);
    return chunk.subarray(from, kept);
  }

  /** Part of a line (it goes on in the next chunk): a header line kept whole, a body line only if it may be a delimiter. */
  private take(chunk: Uint8Array, from: number, to: number): void {
    if (from === to) return;
    const first = this.lineLength === 0;
    this.lineLength += to - from;
    if (this.lineIgnored) return;
    if (this.block === null) {
      if (first && (chunk[from] !== DASH || (to - from > 1 && chunk[from + 1] !== DASH))) {
        this.lineIgnored = true;
        return;
      }
      // "--" + the longest boundary + "--", then only whether anything but whitespace follows.
      const kept = Math.min(Math.max(0, this.longestBoundary + 4 - this.lineKept), to - from);
      if (kept > 0) this.keep(copyOf(chunk, from, from + kept));
      if (!this.lineTailOther) this.lineTailOther = hasOther(chunk, from + kept, to);
      return;
    }
    // A header line: every byte counts toward its block's size, and the block is bounded by maxHeaderBytes.
    const room = this.limits.maxHeaderBytes + 1 - this.lineKept;
    if (room > 0) this.keep(copyOf(chunk, from, from + Math.min(room, to - from)));
  }

  private keep(bytes: Uint8Array): void {
    this.line.push(bytes);
    this.lineKept += bytes.length;
  }

  /** One line ended: `bytes` what was kept of it (null: ignored), `length` its whole length. */
  private endLine(bytes: Uint8Array | null, length: number, nextLineStart: number): void {
    if (bytes !== null) {
      const text = latin1(bytes).replace(/\r+$/, '');
      if (this.block === null) {
        if (text.startsWith('--')) this.delimiter(text);
      } else {
        // Trailing CRs are not the line's (postal-mime counts the rest toward maxHeadersSize).
        const cut = length > bytes.length ? 0 : bytes.length - text.length;
        this.headerLine(text, length - cut, nextLineStart);
      }
    }
    this.line = [];
    this.lineLength = 0;
    this.lineKept = 0;
    this.lineIgnored = false;
    this.lineTailOther = false;
  }

  private headerLine(text: string, length: number, nextLineStart: number): void {
    const block = this.block as Block;
    if (text === '') {
      this.endBlock(block, nextLineStart);
      return;
    }
    block.bytes += length;
    if (block.bytes > this.limits.maxHeaderBytes) {
      this.over('header_bytes', block.bytes, this.limits.maxHeaderBytes);
      return;
    }
    const folded = text.startsWith(' ') || text.startsWith('\t');
    if (folded) {
      if (block.current === 'content-type') block.contentType += text;
      else if (block.current === 'content-transfer-encoding') block.transferEncoding += text;
      return;
    }
    block.fields++;
    if (block.fields > this.limits.maxHeaderFields) {
      this.over('header_fields', block.fields, this.limits.maxHeaderFields);
      return;
    }
    const colon = text.indexOf(':');
    const name = (colon < 0 ? text : text.slice(0, colon)).trim().toLowerCase();
    const value = colon < 0 ? '' : text.slice(colon + 1);
    // The last one wins, as in postal-mime (it reads the header list from the end).
    if (name === 'content-type') block.contentType = value;
    else if (name === 'content-transfer-encoding') block.transferEncoding = value;
    block.current = name === 'content-type' || name === 'content-transfer-encoding' ? name : null;
  }

  private endBlock(block: Block, bodyStart: number): void {
    if (this.headerEnd === null) this.headerEnd = bodyStart;
    const { type, boundary } = contentTypeOf(block.contentType);
    const effective = type === '' && block.inDigest ? 'message/rfc822' : type;
    this.block = null;
    if (effective.startsWith('multipart/') && boundary) {
      this.boundaries.set(boundary, { depth: block.depth, digest: effective === 'multipart/digest' });
      this.longestBoundary = Math.max(this.longestBoundary, boundary.length);
    } else if (effective === 'message/rfc822' && IDENTITY_ENCODINGS.has(block.transferEncoding.trim().toLowerCase())) {
      // A nested message as it is: its own header block starts here, one level down.
      this.open(block.depth + 1, false);
    }
  }

  private delimiter(text: string): void {
    if (this.lineTailOther) return;
    const trimmed = text.replace(/[ \t]+$/, '').slice(2);
    // "--b" opens a part; "--b--" closes the multipart (its epilogue is body, as is everything after it).
    const found = this.boundaries.get(trimmed);
    if (found) {
      this.parts++;
      if (this.parts > this.limits.maxParts) {
        this.over('parts', this.parts, this.limits.maxParts);
        return;
      }
      this.open(found.depth + 1, found.digest);
    }
  }

  private open(depth: number, inDigest: boolean): void {
    this.depth = Math.max(this.depth, depth);
    if (depth > this.limits.maxDepth) {
      this.over('depth', depth, this.limits.maxDepth);
      return;
    }
    this.block = newBlock(depth, inDigest);
  }

  private over(limit: MimeLimitName, found: number, max: number): void {
    this.breach = { limit, found, max };
  }
}

/** The whole message at once. */
export function scanMime(raw: Uint8Array, limits: MimeLimits): MimeScan {
  const scanner = new MimeScanner(limits);
  scanner.feed(raw);
  return scanner.result();
}

function newBlock(depth: number, inDigest: boolean): Block {
  return { depth, inDigest, fields: 0, bytes: 0, contentType: '', transferEncoding: '', current: null };
}

/** A Content-Type's type (lower-case) and boundary parameter, read as postal-mime reads structured headers. */
export function contentTypeOf(value: string): { type: string; boundary: string | null } {
  const stripped = stripComments(value);
  const params = splitParams(stripped);
  const type = (params[0] ?? '').trim().toLowerCase();
  let boundary: string | null = null;
  for (const param of params.slice(1)) {
    const equals = param.indexOf('=');
    if (equals < 0) continue;
    if (param.slice(0, equals).trim().toLowerCase() === 'boundary') boundary = unquote(param.slice(equals + 1).trim());
  }
  return { type, boundary: boundary || null };
}

/** Splits on `;` outside double quotes (a backslash escapes the next character). */
function splitParams(value: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && i + 1 < value.length) {
      current += c + value[++i];
    } else if (c === '"') {
      quoted = !quoted;
      current += c;
    } else if (c === ';' && !quoted) {
      out.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  out.push(current);
  return out;
}

function unquote(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && i + 1 < value.length) out += value[++i];
    else if (c !== '"') out += c;
  }
  return out.trim();
}

/** RFC 822 comments (parenthesized, nesting, outside quotes) removed, as postal-mime does before parsing. */
function stripComments(value: string): string {
  if (!value.includes('(')) return value;
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && i + 1 < value.length) {
      if (depth === 0) out += c + value[i + 1];
      i++;
    } else if (c === '"' && depth === 0) {
      quoted = !quoted;
      out += c;
    } else if (c === '(' && !quoted) {
      depth++;
    } else if (c === ')' && !quoted && depth > 0) {
      depth--;
    } else if (depth === 0) {
      out += c;
    }
  }
  return out;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
}

/** A copy of bytes[from, to): kept past this chunk, whose memory its sender may reuse (a Buffer's slice is a view). */
function copyOf(bytes: Uint8Array, from: number, to: number): Uint8Array {
  return new Uint8Array(bytes.subarray(from, to));
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Whether bytes[from, to) hold anything but spaces, tabs and CRs. */
function hasOther(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x09 && c !== CR) return true;
  }
  return false;
}
