// The local runtime's notices (app/notices): appended to notices.jsonl in the data directory, one JSON line per
// notice, and told as one console line, in place of the e-mail SES sends on AWS.
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Notice, Notifier } from '../../app/notices/notify';

export class FileNotifier implements Notifier {
  constructor(
    private readonly dataDir: string,
    private readonly print: (line: string) => void = (line) => console.log(line),
    private readonly now: () => number = Date.now,
  ) {}

  async send(notice: Notice): Promise<void> {
    const line = { at: new Date(this.now()).toISOString(), ...notice };
    await appendFile(join(this.dataDir, 'notices.jsonl'), `${JSON.stringify(line)}\n`, { mode: 0o600 });
    this.print(`Notice to ${notice.to} (${notice.accountId}): ${notice.subject} [notices.jsonl]`);
  }
}
