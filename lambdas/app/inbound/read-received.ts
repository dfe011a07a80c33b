// Reading received emails (GET /v1/emails/receiving...): a tenant's page newest first, one email with its parsed
// body and a download link of the raw message, its attachments with download links. Another tenant's id is
// not found. Kept apart from receive-email.ts so the API function never loads the MIME parser.
import { NotFoundError } from '../../domain/errors';
import { safeFilename } from '../../domain/inbound';
import type { Tenant } from '../webhooks/ports';
import type {
  ReceivedAttachment,
  ReceivedBody,
  ReceivedEmail,
  ReceivedEmailRepository,
  ReceivedPage,
  ReceivedPageQuery,
} from './ports';

/** The file store as reading uses it (app/files: FileStore). */
export interface ReadableFiles {
  get(key: string): Promise<{ readonly bytes: Uint8Array } | null>;
  downloadUrl(
    key: string,
    options: { filename: string; contentType: string },
  ): Promise<{ readonly url: string; readonly expires_at: string }>;
}

export interface ReadReceivedDeps {
  readonly receivedEmails: Pick<ReceivedEmailRepository, 'get' | 'list'>;
  readonly files: ReadableFiles;
}

export interface DownloadLink {
  readonly url: string;
  readonly expires_at: string;
}

export function listReceivedEmails(
  deps: Pick<ReadReceivedDeps, 'receivedEmails'>,
  tenant: Tenant,
  query: ReceivedPageQuery,
): Promise<ReceivedPage> {
  return deps.receivedEmails.list(tenant, query);
}

export async function getReceivedEmail(
  deps: ReadReceivedDeps,
  tenant: Tenant,
  id: string,
): Promise<{ email: ReceivedEmail; body: ReceivedBody; raw: DownloadLink }> {
  const email = await found(deps, tenant, id);
  const stored = await deps.files.get(email.bodyKey);
  // A body gone before its item (storage expires lazily on both sides) reads as empty, not as an error.
  const body: ReceivedBody = stored
    ? (JSON.parse(new TextDecoder().decode(stored.bytes)) as ReceivedBody)
    : { html: null, text: null, headers: {} };
  const raw = await deps.files.downloadUrl(email.rawKey, {
    filename: `${email.id}.eml`,
    contentType: 'message/rfc822',
  });
  return { email, body, raw };
}

export async function listReceivedAttachments(
  deps: ReadReceivedDeps,
  tenant: Tenant,
  id: string,
): Promise<{ attachment: ReceivedAttachment; link: DownloadLink }[]> {
  const email = await found(deps, tenant, id);
  return Promise.all(
    email.attachments.map(async (attachment) => ({ attachment, link: await linkOf(deps, attachment) })),
  );
}

export async function getReceivedAttachment(
  deps: ReadReceivedDeps,
  tenant: Tenant,
  id: string,
  attachmentId: string,
): Promise<{ attachment: ReceivedAttachment; link: DownloadLink }> {
  const email = await found(deps, tenant, id);
  const attachment = email.attachments.find((candidate) => candidate.id === attachmentId);
  if (!attachment) throw new NotFoundError(`No attachment ${attachmentId} on received email ${id}.`);
  return { attachment, link: await linkOf(deps, attachment) };
}

async function found(
  deps: Pick<ReadReceivedDeps, 'receivedEmails'>,
  tenant: Tenant,
  id: string,
): Promise<ReceivedEmail> {
  const email = await deps.receivedEmails.get(tenant, id);
  if (!email) throw new NotFoundError(`No received email with id ${id}.`);
  return email;
}

/** The sender chose the file name: it reaches a Content-Disposition header only cleaned (domain/inbound). */
function linkOf(deps: Pick<ReadReceivedDeps, 'files'>, attachment: ReceivedAttachment): Promise<DownloadLink> {
  return deps.files.downloadUrl(attachment.key, {
    filename: safeFilename(attachment.filename) ?? attachment.id,
    contentType: attachment.contentType,
  });
}
