// Notices on AWS (app/notices): one SES SendEmail of plain text from the stage's sender (SF_NOTICE_FROM, an
// identity verified in SES; the functions' grant is scoped to it). Not in a configuration set: a notice is no
// tenant's email, and its events are not the tenants' events.
import { type SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import type { Notice, Notifier } from '../../app/notices/notify';

export class SesNotifier implements Notifier {
  constructor(
    private readonly ses: SESv2Client,
    private readonly from: string,
  ) {}

  async send(notice: Notice): Promise<void> {
    await this.ses.send(
      new SendEmailCommand({
        FromEmailAddress: this.from,
        Destination: { ToAddresses: [notice.to] },
        Content: {
          Simple: {
            Subject: { Data: notice.subject, Charset: 'UTF-8' },
            Body: { Text: { Data: notice.text, Charset: 'UTF-8' } },
          },
        },
      }),
    );
  }
}
