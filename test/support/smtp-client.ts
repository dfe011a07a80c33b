// A raw SMTP client over a loopback socket for tests: sends exactly the bytes it is given (hostile input too)
// and reads whole replies (multi-line ones included), so tests assert on codes and texts as a server sent them.
import { connect, type Socket } from 'node:net';

export interface SmtpReply {
  readonly code: number;
  /** The text after the code; a multi-line reply's lines joined by newlines. */
  readonly text: string;
}

export class RawSmtp {
  private buffer = '';
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk) => {
      this.buffer += chunk.toString('latin1');
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('close', () => {
      this.closed = true;
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('error', () => {});
  }

  /** `localAddress`: the client's own address (any 127.x.y.z on Linux: another client of the same server). */
  static async open(
    port: number,
    host = '127.0.0.1',
    localAddress?: string,
  ): Promise<{ client: RawSmtp; greeting: SmtpReply }> {
    const socket = connect({ port, host, ...(localAddress ? { localAddress } : {}) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const client = new RawSmtp(socket);
    return { client, greeting: await client.reply() };
  }

  /** Writes bytes as they are (no line ending added). */
  write(data: string | Uint8Array): void {
    if (!this.closed) this.socket.write(data);
  }

  /** Sends one command line and reads its reply. */
  async command(line: string, timeoutMs = 10_000): Promise<SmtpReply> {
    this.write(`${line}\r\n`);
    return this.reply(timeoutMs);
  }

  /** The next whole reply; a closed connection gives code 0. */
  async reply(timeoutMs = 10_000): Promise<SmtpReply> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = /^(?:\d{3}-[^\r\n]*\r\n)*(\d{3}) ([^\r\n]*)\r\n/.exec(this.buffer);
      if (match) {
        this.buffer = this.buffer.slice(match[0].length);
        // A multi-line reply's text is every line's, in order (EHLO's extensions), joined by newlines.
        const text = match[0]
          .split('\r\n')
          .filter(Boolean)
          .map((line) => line.slice(4))
          .join('\n');
        return { code: Number(match[1]), text };
      }
      if (this.closed) return { code: 0, text: 'closed' };
      if (Date.now() > deadline)
        throw new Error(`no SMTP reply within ${timeoutMs} ms (buffer: ${this.buffer.slice(0, 200)})`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** EHLO, MAIL FROM, each RCPT TO, DATA, the message (dot-stuffed), and the final reply. */
  async send(
    from: string,
    to: readonly string[],
    message: string | Buffer,
  ): Promise<{ rcpt: SmtpReply[]; data: SmtpReply }> {
    await this.command('EHLO test.local');
    await this.command(`MAIL FROM:<${from}>`);
    const rcpt: SmtpReply[] = [];
    for (const address of to) rcpt.push(await this.command(`RCPT TO:<${address}>`));
    const go = await this.command('DATA');
    if (go.code !== 354) return { rcpt, data: go };
    // Bytes stay bytes: a Buffer goes through latin1 (one char per byte), a string as UTF-8.
    const encoding = Buffer.isBuffer(message) ? 'latin1' : 'utf8';
    const body = Buffer.isBuffer(message) ? message.toString('latin1') : message;
    const stuffed = `${body.replace(/^\./gm, '..')}${body.endsWith('\r\n') ? '' : '\r\n'}.\r\n`;
    this.write(Buffer.from(stuffed, encoding));
    return { rcpt, data: await this.reply(60_000) };
  }

  close(): void {
    this.socket.destroy();
  }
}
