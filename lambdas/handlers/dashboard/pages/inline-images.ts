// An HTML body's inline images (`<img src="cid:logo">`, the Content-ID of an attachment) in the dashboard's
// preview: the preview fetches nothing (its CSP allows data: images only), so a `cid:` source would show as a
// broken image. Each becomes the attached image itself as a data: URL (app/dashboard/inline-images: raster
// images only, bounded), or else a placeholder, an SVG data: image naming the attachment; the page lists the
// attachment itself with its download link.

interface InlineAttachment {
  readonly filename?: string | null;
  readonly content_id?: string | null;
}

/** A `src` attribute whose value is a cid: URL, quoted either way or not at all. */
const CID_SRC = /(\bsrc\s*=\s*)(?:"cid:([^"]*)"|'cid:([^']*)'|cid:([^\s>"']*))/gi;

const xml = (text: string) =>
  text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c);

/** The placeholder: a grey box saying which attachment the image is. */
export function placeholderImage(label: string): string {
  const text = xml(label.length > 40 ? `${label.slice(0, 39)}…` : label);
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="60" viewBox="0 0 240 60">' +
    '<rect x="0.5" y="0.5" width="239" height="59" rx="4" fill="#eff2f5" stroke="#8c959f" stroke-dasharray="4 3"/>' +
    `<text x="120" y="26" font-family="sans-serif" font-size="12" fill="#424a53" text-anchor="middle">Inline image</text>` +
    `<text x="120" y="44" font-family="sans-serif" font-size="12" fill="#424a53" text-anchor="middle">${text}</text></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/** The Content-IDs the HTML's cid: image sources name (decoded). */
export function cidsOf(html: string): Set<string> {
  return new Set(
    [...html.matchAll(CID_SRC)].map(([, , double, single, bare]) => decodeSafely(double ?? single ?? bare ?? '')),
  );
}

/**
 * The HTML with every cid: image source replaced by its image (`images`: Content-ID → data: URL) or, when there
 * is none, a placeholder naming its attachment (or its Content-ID).
 */
export function inlineImagePlaceholders(
  html: string,
  attachments: readonly InlineAttachment[],
  images: ReadonlyMap<string, string> = new Map(),
): string {
  const byId = new Map(
    attachments.filter((a) => a.content_id).map((a) => [String(a.content_id).replace(/^<|>$/g, ''), a.filename ?? '']),
  );
  return html.replace(CID_SRC, (_match, prefix: string, double?: string, single?: string, bare?: string) => {
    const id = decodeSafely(double ?? single ?? bare ?? '');
    return `${prefix}"${images.get(id) ?? placeholderImage(byId.get(id) || id || 'attachment')}"`;
  });
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
