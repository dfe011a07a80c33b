// The SES message tags Sendflow puts on every SendEmail: SES copies them into each event's mail.tags, which
// is how an SES event finds its way back to our email, account and mode.
export const SES_TAGS = {
  emailId: 'email_id',
  accountId: 'account_id',
  mode: 'mode',
  /** Only on emails sent by template: its id comes back on every SES event as `template_id`. */
  templateId: 'template_id',
  /**
   * Only on traced emails: the trace context's ids (domain/trace-context.ts's compact form without a tracestate,
   * which SES tag values cannot hold), so SES's events join the trace of the request that sent the email.
   */
  trace: 'trace',
} as const;
