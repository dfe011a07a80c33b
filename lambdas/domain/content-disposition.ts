// Content-Disposition for a download or an attachment part (RFC 6266, RFC 5987): an ASCII `filename` every
// client reads, and `filename*` with the exact UTF-8 name for those that read it. Quotes, backslashes and
// control characters never reach the header.

/** `attachment; filename="…"; filename*=UTF-8''…` (or `inline`). */
export function contentDisposition(filename: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_') || 'file';
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
