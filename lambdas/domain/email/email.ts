// Emails as the API accepts them (DESIGN §6) and the addresses in them.

/** `a@b.c` or `Name <a@b.c>`. Deliberately simple: the provider is the final judge. */
const ADDRESS = /^(?:[^<>@\r\n]*<)?[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+>?$/;

export function isEmailAddress(value: string): boolean {
  const trimmed = value.trim();
  return ADDRESS.test(trimmed) && trimmed.includes('<') === trimmed.endsWith('>');
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
}

/** Everyone the email goes to: each gets its own events. */
export function recipients(email: Pick<EmailMessage, 'to' | 'cc' | 'bcc'>): string[] {
  return [...email.to, ...email.cc, ...email.bcc];
}
