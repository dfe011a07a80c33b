// Use case of the dashboard's settings page: the account's address for notices (issue 31 item 5). Dashboard-only,
// like sign-out everywhere: no API route reads or writes it. Sendflow sends that address a short notice when the
// account's reputation is warned or paused, or a webhook is disabled (app/notices); with none, it sends nothing.
import { addressProblem } from '../../domain/email/email';
import { NotFoundError } from '../../domain/errors';
import type { AccountRepository } from '../ports';

export interface NoticeAddressDeps {
  readonly accounts: Pick<AccountRepository, 'setNoticeEmail'>;
}

/** The form's field name (and the flash's key for its problem). */
export const NOTICE_EMAIL_FIELD = 'notice_email';

/** The problem with an address typed in the form, in plain words, or null (an empty one clears the address). */
export function noticeEmailProblem(value: string): string | null {
  const address = value.trim();
  if (address === '') return null;
  if (/[<>\s]/.test(address)) return 'Write the address alone, such as you@example.com.';
  return addressProblem(address);
}

export type NoticeEmailResult =
  | { readonly ok: true; readonly noticeEmail: string | null }
  | { readonly ok: false; readonly problem: string };

/** Sets the address (trimmed) or clears it (empty); a malformed one changes nothing and says why. */
export async function setNoticeAddress(
  deps: NoticeAddressDeps,
  accountId: string,
  value: string,
): Promise<NoticeEmailResult> {
  const problem = noticeEmailProblem(value);
  if (problem) return { ok: false, problem };
  const address = value.trim() || null;
  if (!(await deps.accounts.setNoticeEmail(accountId, address))) {
    throw new NotFoundError(`No account with id ${accountId}.`);
  }
  return { ok: true, noticeEmail: address };
}
