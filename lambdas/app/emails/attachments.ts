// Use cases of attachments: at accept, each email's attachments are resolved (a `path` fetched once per request,
// at most 20 different ones), checked
// against the limits (domain/email/attachments.ts), given ids and stored as files before the email itself; the
// send worker reads them back for the provider; the API lists them with expiring download links.
import {
  ATTACHMENT_LIMITS,
  type AttachmentMeta,
  attachmentKey,
  contentTypeFor,
  contentTypeProblem,
} from '../../domain/email/attachments';
import { InvalidAttachmentError, NotFoundError } from '../../domain/errors';
import { timeOrderedId } from '../../domain/ids';
import type { DownloadLink, FileStore } from '../files/ports';
import type { RandomBytes } from '../ports';
import type { AttachmentFetcher, EmailRecord, FetchedAttachment, OutgoingAttachment } from './ports';

/** An attachment as the request gives it (validated at the edge): its bytes, or a URL to fetch them from. */
export interface AttachmentInput {
  readonly filename: string;
  readonly contentType?: string;
  readonly contentId?: string;
  readonly content?: Uint8Array;
  readonly path?: string;
}

/** How long all of one request's `path` downloads may take together: well within API Gateway's 29 s. */
export const FETCH_BUDGET_MS = 15_000;

export interface AttachmentDeps {
  readonly files: Pick<FileStore, 'put' | 'get' | 'exists' | 'downloadUrl'>;
  readonly attachmentFetcher?: AttachmentFetcher;
  readonly random: RandomBytes;
}

/** One email's attachments, ready to store: metadata for the email, bytes for the file store. */
export interface PreparedAttachments {
  readonly metas: AttachmentMeta[];
  readonly contents: Uint8Array[];
}

/**
 * Resolves every email's attachments (by index of `inputs`): `path`s are fetched, sizes summed per email and per
 * request. Any problem refuses the request whole: 422 invalid_attachment with each problem's path.
 */
export async function prepareAttachments(
  deps: Pick<AttachmentDeps, 'attachmentFetcher' | 'random'>,
  inputs: readonly (readonly AttachmentInput[] | undefined)[],
  options: { readonly batch: boolean; readonly now: number },
): Promise<(PreparedAttachments | undefined)[]> {
  const where = (email: number, i: number, field?: string) =>
    `${options.batch ? `${email}.` : ''}attachments.${i}${field ? `.${field}` : ''}`;
  const problems: { path: string; message: string }[] = [];
  const urls = new Set(inputs.flatMap((list) => (list ?? []).flatMap((a) => (a.content ? [] : (a.path ?? [])))));
  if (urls.size > ATTACHMENT_LIMITS.pathFetchesPerRequest) {
    // Before any fetch: the request is refused whole anyway.
    throw new InvalidAttachmentError('An attachment cannot be sent as given.', {
      details: [
        {
          path: 'attachments',
          message: `One request fetches at most ${ATTACHMENT_LIMITS.pathFetchesPerRequest} different path URLs; this one names ${urls.size}.`,
        },
      ],
    });
  }
  // Each URL's answer, kept for the request: another email (or attachment) naming it reuses it, failure included.
  const answers = new Map<string, FetchedAttachment>();
  const signal = AbortSignal.timeout(FETCH_BUDGET_MS);
  let requestBytes = 0;
  const prepared: (PreparedAttachments | undefined)[] = [];
  for (const [e, list] of inputs.entries()) {
    if (!list?.length) {
      prepared.push(undefined);
      continue;
    }
    const metas: AttachmentMeta[] = [];
    const contents: Uint8Array[] = [];
    let emailBytes = 0;
    for (const [i, input] of list.entries()) {
      let bytes = input.content;
      let fetchedType: string | undefined;
      if (!bytes && input.path !== undefined) {
        if (!deps.attachmentFetcher) throw new Error('No attachment fetcher is wired (see runtime/).');
        const left = Math.min(ATTACHMENT_LIMITS.emailBytes - emailBytes, ATTACHMENT_LIMITS.requestBytes - requestBytes);
        const fetched =
          answers.get(input.path) ??
          (await deps.attachmentFetcher.fetch(input.path, { maxBytes: Math.max(0, left), signal }));
        answers.set(input.path, fetched);
        if (!fetched.ok) {
          problems.push({ path: where(e, i, 'path'), message: fetched.reason });
          continue;
        }
        bytes = fetched.bytes;
        fetchedType = fetched.contentType;
      }
      if (!bytes) continue; // the edge refused it already (neither content nor path)
      emailBytes += bytes.byteLength;
      requestBytes += bytes.byteLength;
      // The URL's own type when it names a real one (a malformed header or the generic octet-stream says nothing).
      const answered =
        fetchedType && fetchedType !== 'application/octet-stream' && contentTypeProblem(fetchedType) === null
          ? fetchedType
          : undefined;
      const contentType = input.contentType ?? answered;
      metas.push({
        id: timeOrderedId('att', options.now, deps.random),
        filename: input.filename,
        size: bytes.byteLength,
        contentType: contentType ?? contentTypeFor(input.filename),
        disposition: input.contentId ? 'inline' : 'attachment',
        ...(input.contentId ? { contentId: input.contentId } : {}),
      });
      contents.push(bytes);
    }
    if (emailBytes > ATTACHMENT_LIMITS.emailBytes) {
      problems.push({
        path: options.batch ? `${e}.attachments` : 'attachments',
        message: `The attachments of an email are at most ${ATTACHMENT_LIMITS.emailBytes} bytes together (decoded); these are ${emailBytes}.`,
      });
    }
    prepared.push({ metas, contents });
  }
  if (requestBytes > ATTACHMENT_LIMITS.requestBytes && problems.length === 0) {
    problems.push({
      path: 'attachments',
      message: `One request stores at most ${ATTACHMENT_LIMITS.requestBytes} bytes of attachments; send the batch in parts.`,
    });
  }
  if (problems.length) {
    throw new InvalidAttachmentError('An attachment cannot be sent as given.', { details: problems });
  }
  return prepared;
}

/**
 * Stores each email's attachments as files under its id, expiring with the email. Written before the email is
 * stored: a crash in between leaves files no email names, which expire (the bucket's lifecycle, lazily on read).
 */
export async function storeAttachments(
  deps: Pick<AttachmentDeps, 'files'>,
  emails: readonly {
    readonly id: string;
    readonly prepared?: PreparedAttachments;
    readonly expiresAt: number;
    /** Kept a day at most (a test-mode email sent now): the file store deletes it early (FileStore). */
    readonly shortLived?: boolean;
  }[],
): Promise<void> {
  const puts = emails.flatMap(({ id, prepared, expiresAt, shortLived }) =>
    (prepared?.metas ?? []).map((meta, i) => ({
      meta,
      id,
      bytes: prepared?.contents[i] as Uint8Array,
      options: { contentType: meta.contentType, expiresAt, ...(shortLived ? { shortLived } : {}) },
    })),
  );
  // A few at a time: an S3 PUT each, at most 20 per email.
  for (let i = 0; i < puts.length; i += 10) {
    await Promise.all(
      puts
        .slice(i, i + 10)
        .map(({ meta, id, bytes, options }) => deps.files.put(attachmentKey(id, meta.id), bytes, options)),
    );
  }
}

/** The email's attachments with their bytes, for the provider; null when one of them is no longer stored. */
export async function loadAttachments(
  deps: Pick<AttachmentDeps, 'files'>,
  email: Pick<EmailRecord, 'id' | 'attachments'>,
): Promise<OutgoingAttachment[] | null> {
  const metas = email.attachments ?? [];
  const files = await Promise.all(metas.map((meta) => deps.files.get(attachmentKey(email.id, meta.id))));
  if (files.some((file) => file === null)) return null;
  return metas.map((meta, i) => ({ ...meta, content: (files[i] as { bytes: Uint8Array }).bytes }));
}

/** Whether every attachment of the email is still stored (their bytes not read). */
export async function attachmentsStored(
  deps: Pick<AttachmentDeps, 'files'>,
  email: Pick<EmailRecord, 'id' | 'attachments'>,
): Promise<boolean> {
  const metas = email.attachments ?? [];
  const found = await Promise.all(metas.map((meta) => deps.files.exists(attachmentKey(email.id, meta.id))));
  return found.every(Boolean);
}

/** An attachment as GET /v1/emails/:id/attachments[/:aid] shows it: its metadata and a download link. */
export type AttachmentWithLink = AttachmentMeta & DownloadLink;

/** Every attachment of an email (already read and checked for the tenant), each with a fresh link. */
export async function attachmentLinks(
  deps: Pick<AttachmentDeps, 'files'>,
  email: Pick<EmailRecord, 'id' | 'attachments'>,
  only?: string,
): Promise<AttachmentWithLink[]> {
  const metas = (email.attachments ?? []).filter((meta) => only === undefined || meta.id === only);
  if (only !== undefined && metas.length === 0) throw new NotFoundError(`No attachment with id ${only}.`);
  return Promise.all(
    metas.map(async (meta) => ({
      ...meta,
      ...(await deps.files.downloadUrl(attachmentKey(email.id, meta.id), {
        filename: meta.filename,
        contentType: meta.contentType,
      })),
    })),
  );
}
