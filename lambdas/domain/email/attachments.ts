// What an attachment may be (docs/sending.md, "Attachments"): limits that fit SES v2's 40 MB message and the API
// Lambda's 6 MB request payload, SES's refused file types, names that are safe in a MIME header and on disk, and
// inline parts by Content-ID. Each rule returns the problem in words, or null. No I/O here.

export const ATTACHMENT_LIMITS = {
  /** Attachments per email: Resend names none; ours keeps an email's metadata and its send bounded. */
  perEmail: 20,
  /**
   * Bytes of one email's attachments after decoding. SES v2 takes a 40 MB message; base64 in MIME (with line
   * breaks) grows 10 MB to about 13.7 MB, leaving the body and headers far within 40 MB. Resend's 40 MB would not.
   */
  emailBytes: 10 * 1024 * 1024,
  /** Bytes of attachments one request stores (a batch's, `path` downloads included): the API function's memory. */
  requestBytes: 10 * 1024 * 1024,
  /** SES Attachment FileName: at most 255 characters. */
  filename: 255,
  /** SES Attachment ContentId: 1 to 78 characters. */
  contentId: 78,
  /** A media type as RFC 6838 bounds it (127 + "/" + 127). */
  contentType: 255,
  /** An https URL to fetch (`path`). */
  url: 2048,
  /**
   * Different `path` URLs one request fetches (a batch's included; the same URL is fetched once and reused): the
   * API function's outbound requests per call stay bounded, not 100 emails x 20 attachments.
   */
  pathFetchesPerRequest: 20,
  /**
   * Requests of one account that store attachments at once (the local runtime; on AWS each is its own function
   * instance): each may download, copy and write 10 MB, so one tenant's flood of them holds a bounded share of
   * the one process; the account's others wait their turn.
   */
  requestsAtOnce: 1,
} as const;

/**
 * Extensions SES refuses (Amazon SES Developer Guide, "Unsupported attachment types"), compared lower-cased. Refused
 * at the API with 422 rather than accepted to fail at SES on AWS only.
 */
export const SES_BLOCKED_EXTENSIONS: ReadonlySet<string> = new Set(
  (
    'ade adp app asp bas bat cer chm cmd com cpl crt csh der exe fxp gadget hlp hta inf ins isp its js jse ksh lib ' +
    'lnk mad maf mag mam maq mar mas mat mau mav maw mda mdb mde mdt mdw mdz msc msh msh1 msh2 mshxml msh1xml ' +
    'msh2xml msi msp mst ops pcd pif plg prf prg reg scf scr sct shb shs sys ps1 ps1xml ps2 ps2xml psc1 psc2 tmp ' +
    'url vb vbe vbs vps vsmacros vss vst vsw vxd ws wsc wsf wsh xnk'
  ).split(' '),
);

/** C0/C1 controls and DEL; path separators; characters Windows refuses in a name. */
const CONTROL = /\p{Cc}/u;
/**
 * Format characters (\p{Cf}): bidi overrides and isolates (U+202A–202E, U+2066–2069), marks (U+200E/F, U+061C),
 * zero-width ones. A right-to-left override makes "invoice\u202Efdp.exe" show as "invoiceexe.pdf" in a mail
 * client or a download bar; no real filename needs one (an emoji sequence's ZWJ is the price).
 */
const FORMAT = /\p{Cf}/u;
const SEPARATOR = /[/\\]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function filenameProblem(name: string): string | null {
  if (name.trim().length === 0) return 'A filename is required (e.g. "invoice.pdf").';
  if (name.length > ATTACHMENT_LIMITS.filename)
    return `A filename is at most ${ATTACHMENT_LIMITS.filename} characters.`;
  if (CONTROL.test(name)) return 'A filename cannot contain control characters (CR, LF, NUL, …).';
  if (FORMAT.test(name))
    return 'A filename cannot contain invisible format characters (bidi overrides such as U+202E, zero-width characters).';
  if (SEPARATOR.test(name)) return 'A filename cannot contain a path separator ("/" or "\\").';
  if (LONE_SURROGATE.test(name)) return 'The filename contains an unpaired UTF-16 surrogate.';
  if (name === '.' || name === '..') return 'A filename cannot be "." or "..".';
  const extension = windowsExtensionsOf(name).find((ext) => SES_BLOCKED_EXTENSIONS.has(ext));
  if (extension) {
    return `Files ending in .${extension} cannot be sent (Amazon SES refuses executables and scripts: .exe, .bat, .js, .vbs, … see docs/sending.md).`;
  }
  return null;
}

/** The lower-cased extension after the last dot (trailing dots and spaces ignored, as Windows does), or ''. */
export function extensionOf(name: string): string {
  const trimmed = name.replace(/[. ]+$/, '');
  const dot = trimmed.lastIndexOf('.');
  return dot <= 0 && !trimmed.startsWith('.') ? '' : trimmed.slice(dot + 1).toLowerCase();
}

/**
 * The extensions Windows could act on for a name: its own, and the file's before an NTFS stream suffix. On NTFS
 * `x.exe::$DATA`, `x.exe:stream` and `x.exe:stream:$DATA` name streams of the file `x.exe` (the name ends at
 * the first colon), and trailing dots and spaces are dropped (`x.exe.`, `x.exe .::$DATA`).
 */
export function windowsExtensionsOf(name: string): string[] {
  const colon = name.indexOf(':');
  const own = extensionOf(name);
  return colon < 0 ? [own] : [own, extensionOf(name.slice(0, colon))];
}

const MEDIA_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

export function contentTypeProblem(type: string): string | null {
  return MEDIA_TYPE.test(type) ? null : 'content_type is a media type such as application/pdf or image/png.';
}

/** A Content-ID as HTML references it (`cid:logo`): RFC 5322 dot-atom characters and `@`; no spaces, quotes or `<>`. */
const CONTENT_ID = /^[A-Za-z0-9!#$%&'*+\-./=?^_`{|}~@]{1,78}$/;

export function contentIdProblem(id: string): string | null {
  return CONTENT_ID.test(id)
    ? null
    : `content_id is 1 to ${ATTACHMENT_LIMITS.contentId} characters: letters, digits and !#$%&'*+-./=?^_\`{|}~@ (the HTML refers to it as cid:<content_id>).`;
}

/** Strict base64 (standard alphabet, optional padding; whitespace as MIME wraps it is allowed). */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The bytes of base64 text, or null when it is not base64. */
export function decodeBase64(text: string): Uint8Array | null {
  const compact = text.replace(/[\r\n\t ]/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1) return null;
  return new Uint8Array(Buffer.from(compact, 'base64'));
}

const TYPES: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  txt: 'text/plain',
  csv: 'text/csv',
  html: 'text/html',
  htm: 'text/html',
  ics: 'text/calendar',
  json: 'application/json',
  xml: 'application/xml',
  zip: 'application/zip',
  gz: 'application/gzip',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
  eml: 'message/rfc822',
};

/** The media type a filename suggests (as Resend derives it when content_type is absent); octet-stream otherwise. */
export function contentTypeFor(filename: string): string {
  return TYPES[extensionOf(filename)] ?? 'application/octet-stream';
}

/** An attachment as stored with its email and shown by the API (metadata only; the bytes are a file apart). */
export interface AttachmentMeta {
  readonly id: string;
  readonly filename: string;
  /** Bytes, decoded. */
  readonly size: number;
  readonly contentType: string;
  /** `inline` when it has a content_id (an image the HTML shows), else `attachment`. */
  readonly disposition: 'attachment' | 'inline';
  readonly contentId?: string;
}

/** Where an attachment's bytes are kept: beside the email's body (its objects' prefix on S3). */
export const attachmentKey = (emailId: string, attachmentId: string) => `emails/${emailId}/attachments/${attachmentId}`;
